// Profiles: what the dashboard says of one wherever it names it, and the
// editor's draft of one (the Profiles card on the Clients page), turned
// into the request of POST /api/v1/profiles or PUT /api/v1/profiles/{name}.

import { serverNameError } from './install';
import type { ProfileRequest, ProfileView } from './types';

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/**
 * profileFacts says what a profile is in a few words, the same way
 * everywhere it is named: "coding · search · 23 tools behind 2" (search
 * mode: the client sees search_tools and call_tool, the 23 are behind
 * them), "docs · read-only · 12 tools", or its servers while its tools
 * are not counted yet. withName false leaves the name out.
 */
export function profileFacts(p: ProfileView, withName = true): string {
  const parts: string[] = withName ? [p.name] : [];
  if (p.toolSearch) parts.push('search');
  if (p.maxTier === 'read') parts.push('read-only');
  else if (p.maxTier === 'write') parts.push('no destructive tools');
  if (p.toolSearch && p.reachableTools !== undefined) parts.push(`${plural(p.reachableTools, 'tool')} behind 2`);
  else if (p.toolCount !== undefined) parts.push(plural(p.toolCount, 'tool'));
  else parts.push(plural(p.servers.length + (p.missing?.length ?? 0), 'server'));
  return parts.join(' · ');
}

/** profileNamed is the facts of the profile called name in profiles, or the bare name when it is not there. */
export function profileNamed(profiles: ProfileView[], name: string): string {
  const p = profiles.find((x) => x.name === name);
  return p ? profileFacts(p) : name;
}

/** A ProfileDraft is what the profile editor holds. */
export interface ProfileDraft {
  name: string;
  /** The chosen servers, in the order shown. */
  servers: string[];
  /** By server: the tools it is limited to; absent: all its tools. */
  limits: Record<string, string[]>;
  toolSearch: boolean;
  maxTier: '' | 'read' | 'write';
  /** A destructive tool called through the profile's endpoint waits for the user's yes (its own route, not in the request). */
  askFirst: boolean;
}

/** draftOf starts a draft from a profile (an edit) or empty (a new one). */
export function draftOf(p?: ProfileView): ProfileDraft {
  if (!p) return { name: '', servers: [], limits: {}, toolSearch: false, maxTier: '', askFirst: false };
  return {
    name: p.name,
    servers: [...p.servers, ...(p.missing ?? [])],
    limits: Object.fromEntries(Object.entries(p.tools ?? {}).map(([s, t]) => [s, [...t]])),
    toolSearch: !!p.toolSearch,
    maxTier: p.maxTier === 'read' || p.maxTier === 'write' ? p.maxTier : '',
    askFirst: !!p.askBeforeDestructive,
  };
}

/** requestOf is the API request of a draft: limits of servers not chosen are left out. */
export function requestOf(d: ProfileDraft, creating: boolean): ProfileRequest {
  const tools = Object.fromEntries(d.servers.filter((s) => d.limits[s]).map((s) => [s, d.limits[s]]));
  return {
    ...(creating ? { name: d.name.trim() } : {}),
    servers: [...d.servers],
    ...(Object.keys(tools).length ? { tools } : {}),
    ...(d.toolSearch ? { toolSearch: true } : {}),
    ...(d.maxTier ? { maxTier: d.maxTier } : {}),
  };
}

/**
 * draftErrors checks a draft as the daemon will (which checks again): by
 * field, "name", "servers" or "tools.SERVER", a sentence to show there.
 */
export function draftErrors(d: ProfileDraft, creating: boolean, taken: string[]): Record<string, string> {
  const errs: Record<string, string> = {};
  if (creating) {
    const name = d.name.trim();
    const e = serverNameError(name);
    if (!name) errs.name = 'A profile needs a name, like "coding".';
    else if (e) errs.name = e;
    else if (taken.includes(name)) errs.name = `A profile named "${name}" exists already; edit it, or pick another name.`;
  }
  if (d.servers.length === 0) errs.servers = 'Pick at least one server.';
  for (const s of d.servers) {
    if (d.limits[s] && d.limits[s].length === 0) errs[`tools.${s}`] = `Pick at least one tool of ${s}, or let it offer all its tools.`;
  }
  return errs;
}
