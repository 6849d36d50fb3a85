// Remote servers (config entries with "url" instead of "command"): the
// checks of the Add server form, which follow app/config/remote.go so that
// most mistakes are named before the request, and the mapping of the API's
// errors back to the field they name.

import type { ServerConfig } from './types';

export type Transport = 'auto' | 'streamable-http' | 'sse';
export const TRANSPORTS: Transport[] = ['auto', 'streamable-http', 'sse'];

/** A header row of the form: a name and its value. */
export interface HeaderRow {
  name: string;
  value: string;
}

export interface RemoteForm {
  name: string;
  url: string;
  transport: Transport;
  headers: HeaderRow[];
  secretHeaders: HeaderRow[];
  enabled: boolean;
}

/** The body of POST /api/v1/remotes (wire.AddRemoteRequest). */
export interface AddRemoteRequest {
  name: string;
  url: string;
  transport?: Transport;
  headers?: Record<string, string>;
  secretHeaders?: Record<string, string>;
  enabled?: boolean;
}

/** The form's fields an error can be shown next to. */
export type RemoteField = 'name' | 'url' | 'transport' | 'headers' | 'secretHeaders';

/** isRemote says the entry is a remote server's (it has a url). */
export function isRemote(cfg: ServerConfig | undefined): boolean {
  return !!cfg?.url;
}

/** The headers the MCP transports set themselves (app/config ownHeaders). */
const OWN_HEADERS = ['accept', 'content-type', 'content-length', 'host', 'connection', 'transfer-encoding', 'last-event-id', 'mcp-session-id', 'mcp-protocol-version'];
// An HTTP field name: RFC 9110's token characters.
const TOKEN_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// A header value may not hold line breaks or other control characters (tab aside).
// eslint-disable-next-line no-control-regex
const BAD_VALUE_RE = /[\x00-\x08\x0a-\x1f\x7f]/;

/** isLoopbackHost mirrors config.IsLoopbackHost: localhost, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)) return true;
  return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(h);
}

/** urlError checks a remote server's URL as app/config's validateURL does; "" when fine. */
export function urlError(raw: string): string {
  const v = raw.trim();
  if (!v) return 'A URL is required: the server\'s MCP endpoint, like https://mcp.example.com/mcp.';
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return `"${v}" is not a URL: use https://host/path.`;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return 'Use https:// (or http:// to this machine).';
  if (!u.hostname) return 'The URL has no host.';
  if (u.username || u.password) return 'The URL holds a user name or password: put a credential in a secret header instead.';
  if (v.includes('#')) return 'An MCP endpoint has no #fragment.';
  if (u.protocol === 'http:' && !isLoopbackHost(u.hostname)) return 'http:// is only for this machine (127.0.0.1, ::1, localhost): use https://.';
  return '';
}

/** headerNameError checks one header name; "" when fine. */
export function headerNameError(name: string): string {
  if (!TOKEN_RE.test(name)) return `"${name}" is not a header name (letters, digits and !#$%&'*+-.^_\`|~ only).`;
  if (OWN_HEADERS.includes(name.toLowerCase())) return `${name} is set by the MCP transport itself.`;
  return '';
}

/** headersError checks a list of rows (blank rows are ignored); "" when fine. */
export function headersError(rows: HeaderRow[], kind: 'header' | 'secret header'): string {
  const seen = new Set<string>();
  for (const r of rows) {
    const name = r.name.trim();
    if (!name && !r.value) continue;
    if (!name) return `A ${kind} has a value but no name.`;
    const e = headerNameError(name);
    if (e) return e;
    if (seen.has(name.toLowerCase())) return `${name} is given twice.`;
    seen.add(name.toLowerCase());
    if (kind === 'secret header' && !r.value) return `The secret header ${name} has no value.`;
    if (BAD_VALUE_RE.test(r.value)) return `The value of ${name} cannot contain line breaks or control characters.`;
  }
  return '';
}

function rowsToMap(rows: HeaderRow[]): Record<string, string> | undefined {
  const m: Record<string, string> = {};
  for (const r of rows) if (r.name.trim()) m[r.name.trim()] = r.value;
  return Object.keys(m).length ? m : undefined;
}

/** remoteFormErrors checks the form (the name is checked by serverNameError); empty when it can be sent. */
export function remoteFormErrors(f: RemoteForm): Partial<Record<RemoteField, string>> {
  const errs: Partial<Record<RemoteField, string>> = {};
  const u = urlError(f.url);
  if (u) errs.url = u;
  const h = headersError(f.headers, 'header');
  if (h) errs.headers = h;
  let s = headersError(f.secretHeaders, 'secret header');
  if (!s) {
    const plain = new Set(f.headers.map((r) => r.name.trim().toLowerCase()).filter(Boolean));
    const both = f.secretHeaders.find((r) => plain.has(r.name.trim().toLowerCase()));
    if (both) s = `${both.name.trim()} is both a header and a secret header: keep it only as a secret.`;
  }
  if (s) errs.secretHeaders = s;
  return errs;
}

/** remoteRequest is the form as the body of POST /api/v1/remotes. */
export function remoteRequest(f: RemoteForm): AddRemoteRequest {
  const req: AddRemoteRequest = { name: f.name.trim(), url: f.url.trim() };
  if (f.transport !== 'auto') req.transport = f.transport;
  const headers = rowsToMap(f.headers);
  if (headers) req.headers = headers;
  const secrets = rowsToMap(f.secretHeaders);
  if (secrets) req.secretHeaders = secrets;
  if (!f.enabled) req.enabled = false;
  return req;
}

/**
 * errorField is the form field an API error names ("invalid server:
 * servers.x.url: …", "secretHeaders.Authorization: …", "server "x" already
 * exists…"), or undefined when it names none.
 */
export function errorField(message: string): RemoteField | undefined {
  // A field is named as config.Error names it: servers.NAME.FIELD: or FIELD.KEY:.
  const m = /(?:^|\s)(?:servers\.[^.\s:]+\.)?(url|transport|headers|secretHeaders)(?=[.:])/.exec(message);
  if (m) return m[1] as RemoteField;
  if (/"name"|server "[^"]*" (already exists|was added meanwhile)|servers\.[^.\s:]+:/.test(message)) return 'name';
  return undefined;
}

/** remoteSummary is a remote server's short description for the servers list: "remote · streamable-http". */
export function remoteSummary(cfg: ServerConfig, processes: { transport?: string }[]): string {
  // The transport in use once connected (auto resolves to one), else the configured one.
  const t = processes.find((p) => p.transport)?.transport || cfg.transport || 'auto';
  return `remote · ${t}`;
}
