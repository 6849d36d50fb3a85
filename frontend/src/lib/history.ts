// History paging: the table asks for rows by index; the pager loads pages of
// the daemon's cursor API in order as the user scrolls, so 100k calls are
// reached without loading them all at once, and only one page request runs
// at a time. Live call events that match the filters are put on top, in
// batches (one per animation frame, see batch.ts), and at most LIVE_CAP rows
// stay loaded while they come: the oldest are let go and paged in again from
// the daemon when the user scrolls down to them.

import { writable, get } from 'svelte/store';
import { query } from './api';
import type { Call, CallPage } from './types';

export interface HistoryFilters {
  server: string;
  tool: string;
  client: string;
  outcome: string;
  since: string; // "" | duration ("1h") | RFC 3339
  until: string;
  q: string;
}

export const emptyFilters = (): HistoryFilters => ({ server: '', tool: '', client: '', outcome: '', since: '', until: '', q: '' });

export const PAGE_SIZE = 200;

/** How many rows stay loaded while live calls are put on top. */
export const LIVE_CAP = 1000;

/**
 * microAfter is the RFC 3339 time one microsecond after iso (the daemon
 * stores times to the microsecond): as an exclusive "until" it keeps every
 * call that started at iso or before.
 */
export function microAfter(iso: string): string {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(iso);
  if (!m) return iso;
  let micros = Number(((m[2] ?? '') + '000000').slice(0, 6)) + 1;
  let base = Date.parse(m[1] + m[3]);
  if (Number.isNaN(base)) return iso;
  if (micros >= 1_000_000) {
    base += 1000;
    micros -= 1_000_000;
  }
  return `${new Date(base).toISOString().slice(0, 19)}.${String(micros).padStart(6, '0')}Z`;
}

export function filterQuery(f: HistoryFilters, extra: Record<string, string | number | undefined> = {}): string {
  return query({ server: f.server, tool: f.tool, client: f.client, outcome: f.outcome, since: f.since, until: f.until, q: f.q, ...extra });
}

/** matches says whether a live call belongs in a table with these filters. */
export function matches(f: HistoryFilters, c: Call): boolean {
  if (f.server && c.server !== f.server) return false;
  if (f.tool && c.name !== f.tool && c.tool !== f.tool) return false;
  if (f.client && c.clientLabel !== f.client && c.clientName !== f.client) return false;
  if (f.outcome) {
    if (f.outcome === 'error' ? c.outcome === 'ok' : c.outcome !== f.outcome) return false;
  }
  if (f.until) return false; // a window that ends in the past gets no new calls
  if (f.q) {
    const hay = `${c.server} ${c.name} ${c.method} ${c.clientLabel} ${c.clientName} ${c.error ?? ''}`.toLowerCase();
    if (!hay.includes(f.q.toLowerCase())) return false;
  }
  return true;
}

/**
 * A HistorySnapshot is the top of the table as the user left it, kept in
 * the app's context: coming back to History shows it at once while the
 * first page is fetched again (the daemon is busiest exactly when the
 * calls pour in), rather than an empty table.
 */
export interface HistorySnapshot {
  filters: HistoryFilters;
  rows: Call[];
}

export class HistoryPager {
  readonly rows = writable<Call[]>([]);
  readonly loading = writable(false);
  readonly done = writable(false);
  readonly error = writable('');
  /** held counts live calls not put on top because the user looks further down. */
  readonly held = writable(0);
  private next: string | undefined;
  /** After live rows pushed the oldest out: page on from just after the oldest kept. */
  private resumeUntil: string | undefined;
  private generation = 0;
  private inflight: Promise<void> | null = null;
  private seen = new Set<number>();
  /** Rows at the bottom shown from a snapshot until the first page replaces them. */
  private stale = 0;
  filters: HistoryFilters = emptyFilters();

  constructor(
    private readonly get: <T>(path: string) => Promise<T>,
    private readonly pageSize = PAGE_SIZE,
    private readonly cap = LIVE_CAP,
  ) {}

  /**
   * reset starts over with new filters and loads the first page. With a
   * snapshot of the same filters, its rows show until that page comes.
   */
  reset(f: HistoryFilters, from?: HistorySnapshot): Promise<void> {
    this.filters = { ...f };
    this.generation++;
    this.next = undefined;
    this.resumeUntil = undefined;
    this.inflight = null;
    this.seen.clear();
    this.held.set(0);
    const keep = from && sameFilters(from.filters, f) ? from.rows.slice(0, this.pageSize) : [];
    this.stale = keep.length;
    this.rows.set(keep);
    this.done.set(false);
    this.error.set('');
    return this.loadMore();
  }

  /** snapshot is the top of the table (one page), for the next visit. */
  snapshot(): HistorySnapshot {
    return { filters: { ...this.filters }, rows: get(this.rows).slice(0, this.pageSize) };
  }

  /** loadMore loads the next page unless one is loading or none is left. */
  loadMore(): Promise<void> {
    if (this.inflight) return this.inflight;
    if (get(this.done)) return Promise.resolve();
    const gen = this.generation;
    const extra: Record<string, string | number | undefined> = { cursor: this.next, limit: this.pageSize };
    if (this.resumeUntil) extra.until = this.resumeUntil;
    const path = '/api/v1/history' + filterQuery(this.filters, extra);
    this.loading.set(true);
    const p = this.get<CallPage>(path)
      .then((page) => {
        if (gen !== this.generation) return;
        const fresh = (page.calls ?? []).filter((c) => !this.seen.has(c.id));
        for (const c of fresh) this.seen.add(c.id);
        // The snapshot's rows give way to the page (live calls stay on top).
        const stale = this.stale;
        this.stale = 0;
        this.rows.update((r) => (stale ? r.slice(0, r.length - stale) : r).concat(fresh));
        this.next = page.next || undefined;
        if (!this.next) this.done.set(true);
      })
      .catch((err) => {
        if (gen === this.generation) this.error.set((err as Error).message);
      })
      .finally(() => {
        if (gen !== this.generation) return;
        this.inflight = null;
        this.loading.set(false);
      });
    this.inflight = p;
    return p;
  }

  /** ensure loads pages until index is loaded (or no more are left). */
  async ensure(index: number): Promise<void> {
    while (get(this.rows).length <= index && !get(this.done) && !get(this.error)) {
      const before = get(this.rows).length;
      await this.loadMore();
      if (get(this.rows).length === before && !get(this.done)) break; // an empty page with a cursor: stop rather than spin
    }
  }

  /** prepend puts one live call on top when it matches the filters. */
  prepend(c: Call): boolean {
    return this.prependMany([c]) > 0;
  }

  /**
   * prependMany puts the live calls (oldest first, as the stream sends
   * them) that match the filters on top, in one update, and returns how
   * many matched. With hold, they are only counted in held (the user looks
   * further down; the table does not move under them). Past the cap, the
   * oldest rows are let go and paged in again on demand.
   */
  prependMany(calls: Call[], hold = false): number {
    const fresh: Call[] = [];
    for (const c of calls) {
      if (this.seen.has(c.id) || !matches(this.filters, c)) continue;
      if (!hold) this.seen.add(c.id);
      fresh.push(c);
    }
    if (fresh.length === 0) return 0;
    if (hold) {
      this.held.update((n) => n + fresh.length);
      return fresh.length;
    }
    fresh.reverse();
    const next = fresh.concat(get(this.rows));
    if (next.length > this.cap) {
      const kept = next.slice(0, this.cap);
      for (const c of next.slice(this.cap)) this.seen.delete(c.id);
      this.resumeAfter(kept[kept.length - 1]);
      this.rows.set(kept);
    } else {
      this.rows.set(next);
    }
    return fresh.length;
  }

  /** resumeAfter makes the next page start just older than oldest (a page on its way is dropped). */
  private resumeAfter(oldest: Call): void {
    this.stale = 0; // the snapshot's rows are kept calls now: paging goes on after them
    this.generation++;
    this.inflight = null;
    this.loading.set(false);
    this.next = undefined;
    this.resumeUntil = microAfter(oldest.start);
    this.done.set(false);
  }
}

function sameFilters(a: HistoryFilters, b: HistoryFilters): boolean {
  return (Object.keys(a) as (keyof HistoryFilters)[]).every((k) => a[k] === b[k]);
}

/** visibleRange is the slice of rows a virtual list renders. */
export function visibleRange(scrollTop: number, viewport: number, rowHeight: number, total: number, overscan = 8): [number, number] {
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(total, Math.ceil((scrollTop + viewport) / rowHeight) + overscan);
  return [first, Math.max(first, last)];
}

/** Whether an endpoint is an aggregated one: /mcp ("") or a profile's ("p/<name>"). */
const aggregated = (endpoint: string) => endpoint === '' || endpoint.startsWith('p/');

/**
 * ownName is a call's tool as its server calls it: the daemon records it
 * (tool); for a call without it (an older daemon's), the name after the
 * prefix on an aggregated endpoint (/mcp, a profile's: prefix__tool) for
 * a tool or a prompt, else the name (a resource's URI whole); the method
 * for a call without a name.
 */
export function ownName(c: { endpoint: string; name: string; method: string; tool?: string }): string {
  if (c.tool) return c.tool;
  const n = c.name || c.method;
  if (aggregated(c.endpoint) && c.name && (c.method === 'tools/call' || c.method === 'prompts/get')) {
    const i = c.name.indexOf('__');
    if (i > 0) return c.name.slice(i + 2);
  }
  return n;
}

type Named = { endpoint: string; name: string; method: string; tool?: string; server: string; unknown?: string };

/** serverText is the call's server as History shows it: "(unknown)" after one nobody configured. */
export function serverText(c: Named): string {
  if (c.unknown === 'server' && c.server) return `${c.server} (unknown)`;
  return c.server;
}

/** toolText is the call's tool as History shows it: "(unknown)" after one its server does not offer. */
export function toolText(c: Named): string {
  const t = ownName(c);
  return c.unknown === 'tool' || (c.unknown === 'server' && !c.server) ? `${t} (unknown)` : t;
}

/**
 * clientText is who made a call, as History and `switchboard history`
 * show it: the token's label and the client's own name, "cli · cursor";
 * one of them when the other is empty or the same.
 */
export function clientText(c: { clientLabel: string; clientName: string }): string {
  if (!c.clientLabel || c.clientLabel === c.clientName) return c.clientName;
  if (!c.clientName) return c.clientLabel;
  return `${c.clientLabel} · ${c.clientName}`;
}

/** endpointOf is the MCP endpoint a call came through. */
export function endpointOf(c: Pick<Call, 'endpoint'>): string {
  if (!c.endpoint) return '/mcp (every server)';
  if (c.endpoint.startsWith('p/')) return `/mcp/${c.endpoint} (profile ${c.endpoint.slice(2)})`;
  return `/mcp/${c.endpoint}`;
}

/** unknownText says what the gateway did not know of a call's name, or "". */
export function unknownText(c: Named): string {
  if (c.unknown === 'server') return c.server ? `no server "${c.server}" is configured` : 'the name names no server';
  if (c.unknown === 'tool') return `${c.server} offers no tool "${ownName(c)}" ${c.endpoint === c.server ? '' : 'on this endpoint'}`.trim();
  return '';
}

/** outcomeText is an outcome in words: "tool error", not "tool_error". */
export function outcomeText(o: string): string {
  return o.replaceAll('_', ' ');
}
