// History paging: the table asks for rows by index; the pager loads pages of
// the daemon's cursor API in order as the user scrolls, so 100k calls are
// reached without loading them all at once, and only one page request runs
// at a time. Live call events that match the filters are put on top.

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

export function filterQuery(f: HistoryFilters, extra: Record<string, string | number | undefined> = {}): string {
  return query({ server: f.server, tool: f.tool, client: f.client, outcome: f.outcome, since: f.since, until: f.until, q: f.q, ...extra });
}

/** matches says whether a live call belongs in a table with these filters. */
export function matches(f: HistoryFilters, c: Call): boolean {
  if (f.server && c.server !== f.server) return false;
  if (f.tool && c.name !== f.tool) return false;
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

export class HistoryPager {
  readonly rows = writable<Call[]>([]);
  readonly loading = writable(false);
  readonly done = writable(false);
  readonly error = writable('');
  private next: string | undefined;
  private generation = 0;
  private inflight: Promise<void> | null = null;
  private seen = new Set<number>();
  filters: HistoryFilters = emptyFilters();

  constructor(
    private readonly get: <T>(path: string) => Promise<T>,
    private readonly pageSize = PAGE_SIZE,
  ) {}

  /** reset starts over with new filters and loads the first page. */
  reset(f: HistoryFilters): Promise<void> {
    this.filters = { ...f };
    this.generation++;
    this.next = undefined;
    this.inflight = null;
    this.seen.clear();
    this.rows.set([]);
    this.done.set(false);
    this.error.set('');
    return this.loadMore();
  }

  /** loadMore loads the next page unless one is loading or none is left. */
  loadMore(): Promise<void> {
    if (this.inflight) return this.inflight;
    if (get(this.done)) return Promise.resolve();
    const gen = this.generation;
    const path = '/api/v1/history' + filterQuery(this.filters, { cursor: this.next, limit: this.pageSize });
    this.loading.set(true);
    const p = this.get<CallPage>(path)
      .then((page) => {
        if (gen !== this.generation) return;
        const fresh = (page.calls ?? []).filter((c) => !this.seen.has(c.id));
        for (const c of fresh) this.seen.add(c.id);
        this.rows.update((r) => r.concat(fresh));
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

  /** prepend puts a live call on top when it matches the filters. */
  prepend(c: Call): boolean {
    if (this.seen.has(c.id) || !matches(this.filters, c)) return false;
    this.seen.add(c.id);
    this.rows.update((r) => [c, ...r]);
    return true;
  }
}

/** visibleRange is the slice of rows a virtual list renders. */
export function visibleRange(scrollTop: number, viewport: number, rowHeight: number, total: number, overscan = 8): [number, number] {
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(total, Math.ceil((scrollTop + viewport) / rowHeight) + overscan);
  return [first, Math.max(first, last)];
}
