// What the install dialog asks for: the inputs of an entry's package, typed
// by the server.json format, and their client-side validation (the daemon
// validates again).

import { request } from './api';
import type { Argument, CatalogEntry, Input, KeyValue, Package, Remote } from './types';

export type Format = 'string' | 'number' | 'boolean' | 'filepath' | 'directory';

export interface Field {
  key: string; // the key of "values" in POST /installs
  label: string;
  /** An environment variable or argument of a package; a header or URL variable of a remote. */
  kind: 'env' | 'arg' | 'header' | 'var';
  format: Format;
  required: boolean;
  secret: boolean;
  description: string;
  default: string;
  placeholder: string;
  choices: string[];
}

export const INSTALLABLE = new Set(['npm', 'pypi', 'oci', 'mcpb', 'command']);

/** installablePackage is the package the installer would use, or undefined. */
export function installablePackage(e: CatalogEntry): Package | undefined {
  return (e.packages ?? []).find((p) => INSTALLABLE.has(p.registryType) && (!p.transport || p.transport.type === 'stdio'));
}

/** installableRemote is the remote the installer would connect to (as catalog.InstallableRemote), or undefined. */
export function installableRemote(e: CatalogEntry): Remote | undefined {
  return (e.remotes ?? []).find((r) => (r.type === 'streamable-http' || r.type === 'sse') && /^(https?:\/\/|\{)/.test(r.url));
}

/**
 * remoteFieldsOf lists what installing a remote asks for: its URL's
 * variables, then the headers without a fixed value (a secret one, such as
 * an API key, goes to the secret store, never to config.json). The keys
 * are the "values" of POST /installs, as catalog's Remote.Setup takes them.
 */
export function remoteFieldsOf(r: Remote | undefined): Field[] {
  if (!r) return [];
  const out: Field[] = [];
  for (const name of Object.keys(r.variables ?? {}).sort()) out.push(field(name, name, 'var', r.variables![name]));
  for (const h of r.headers ?? []) {
    if (!h.name || h.value) continue;
    out.push(field(h.name, h.name, 'header', h));
  }
  return out;
}

function format(i: Input): Format {
  switch (i.format) {
    case 'number':
    case 'boolean':
    case 'filepath':
    case 'directory':
      return i.format;
    default:
      return 'string';
  }
}

function field(key: string, label: string, kind: Field['kind'], i: Input): Field {
  return {
    key,
    label,
    kind,
    format: format(i),
    required: !!i.isRequired,
    secret: !!i.isSecret,
    description: i.description ?? '',
    default: i.default ?? '',
    placeholder: i.placeholder ?? '',
    choices: i.choices ?? [],
  };
}

/** fieldsOf lists the inputs a user must or may give; fixed values are not asked. */
export function fieldsOf(p: Package | undefined): Field[] {
  if (!p) return [];
  const out: Field[] = [];
  for (const v of p.environmentVariables ?? ([] as KeyValue[])) {
    if (v.value) continue;
    out.push(field(v.name, v.name, 'env', v));
  }
  (p.packageArguments ?? ([] as Argument[])).forEach((a, i) => {
    if (a.value) return;
    const key = a.type === 'named' && a.name ? a.name : a.valueHint || a.name || `arg${i + 1}`;
    out.push(field(key, key, 'arg', a));
  });
  return out;
}

export type Values = Record<string, string | boolean>;

export function initialValues(fields: Field[]): Values {
  const v: Values = {};
  for (const f of fields) v[f.key] = f.format === 'boolean' ? f.default === 'true' : f.default;
  return v;
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$/;

/** serverNameError checks a config name like app/config does. */
export function serverNameError(name: string, taken: string[] = []): string {
  if (!name) return 'A server name is required.';
  if (!NAME_RE.test(name) || name.includes('__'))
    return 'Use 1 to 48 letters, digits, "_", "." or "-", starting with a letter or digit, without "__".';
  if (taken.includes(name)) return `A server named "${name}" exists already; pick another name.`;
  return '';
}

function looksLikePath(s: string): boolean {
  return s.startsWith('/') || s.startsWith('~') || /^[A-Za-z]:[\\/]/.test(s) || s.startsWith('\\\\');
}

/** fieldError is the problem with one value, or "". */
export function fieldError(f: Field, value: string | boolean | undefined): string {
  if (f.format === 'boolean') return '';
  const s = typeof value === 'string' ? value.trim() : '';
  if (!s) return f.required ? `${f.label} is required.` : '';
  if (f.choices.length && !f.choices.includes(s)) return `Choose one of: ${f.choices.join(', ')}.`;
  switch (f.format) {
    case 'number':
      if (!/^-?\d+(\.\d+)?$/.test(s)) return `${f.label} must be a number.`;
      break;
    case 'filepath':
    case 'directory':
      if (!looksLikePath(s)) return `${f.label} must be an absolute path (starting with / or ~).`;
      break;
  }
  return '';
}

export function validate(fields: Field[], values: Values): Record<string, string> {
  const errs: Record<string, string> = {};
  for (const f of fields) {
    const e = fieldError(f, values[f.key]);
    if (e) errs[f.key] = e;
  }
  return errs;
}

/** payload turns the form into the "values" of POST /installs (strings only; empty optional values left out). */
export function payload(fields: Field[], values: Values): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fields) {
    const v = values[f.key];
    if (f.format === 'boolean') out[f.key] = v ? 'true' : 'false';
    else if (typeof v === 'string' && v.trim() !== '') out[f.key] = v.trim();
  }
  return out;
}

/** isPath says whether a field takes a path the daemon can check before the install. */
export function isPath(f: Field): boolean {
  return f.format === 'filepath' || f.format === 'directory';
}

/**
 * checkPath asks the daemon (POST /api/v1/paths/check, which only stats)
 * what the installer would refuse about a path: "" when it would take it,
 * or when the daemon cannot say (an older one without the route, a network
 * error): the install checks again anyway.
 */
export async function checkPath(f: Field, path: string, fetchFn: typeof fetch = fetch): Promise<string> {
  try {
    const res = await request<{ exists: boolean; isDir: boolean; error?: string }>('POST', '/api/v1/paths/check', { path, kind: f.format }, fetchFn);
    return res.error ? `${f.label}: ${res.error}.` : '';
  } catch {
    return '';
  }
}

/**
 * failure splits a failed install's error ("installing x failed during
 * download: npm install failed\nlast output:\n  …") into the phase it
 * names and what went wrong, without the output lines (shown apart).
 */
export function failure(error: string, phase: string): { phase: string; message: string } {
  const head = error.split('\nlast output:')[0].trim();
  const m = /^installing \S+ failed during (\w+): ([\s\S]*)$/.exec(head);
  return m ? { phase: m[1], message: m[2] } : { phase, message: head };
}

/**
 * registryLine is the one line the catalog shows when the registry could
 * not answer (its warning, which names the DNS or network error, goes in
 * the line's tooltip); "" when it answered.
 */
export function registryLine(a: { entries: unknown[]; source: string; warning?: string } | null): string {
  if (!a?.warning) return '';
  const n = a.entries.length;
  if (a.source === 'cache') return `registry offline: showing ${n} server${n === 1 ? '' : 's'} from its cached answers`;
  if (a.source === 'embedded') return `registry offline: showing the ${n} built-in server${n === 1 ? '' : 's'}`;
  return a.warning;
}
