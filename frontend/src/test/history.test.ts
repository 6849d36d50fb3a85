import { describe, expect, it } from 'vitest';
import { get } from 'svelte/store';
import { HistoryPager, emptyFilters, matches, visibleRange, filterQuery } from '../lib/history';
import type { Call, CallPage } from '../lib/types';

const call = (id: number, extra: Partial<Call> = {}): Call => ({
  id,
  start: new Date(1e12 - id * 1000).toISOString(),
  duration: 1e6,
  clientLabel: 'cursor',
  clientName: 'Cursor',
  clientVersion: '1',
  session: 's',
  endpoint: '/mcp',
  server: 'fs',
  method: 'tools/call',
  name: 'read_file',
  outcome: 'ok',
  responseSize: 10,
  ...extra,
});

/** A fake history of n calls, newest first, paged by an opaque cursor. */
function fakeHistory(n: number) {
  const all = Array.from({ length: n }, (_, i) => call(n - i));
  const requests: string[] = [];
  let pending: (() => void)[] = [];
  let hold = false;
  const get = async <T>(path: string): Promise<T> => {
    requests.push(path);
    if (hold) await new Promise<void>((r) => pending.push(r));
    const u = new URL(path, 'http://x');
    const limit = Number(u.searchParams.get('limit') ?? 50);
    const cursor = u.searchParams.get('cursor');
    const from = cursor ? Number(atob(cursor)) : 0;
    const calls = all.slice(from, from + limit);
    const page: CallPage = { calls, next: from + limit < all.length ? btoa(String(from + limit)) : undefined };
    return page as T;
  };
  return {
    get,
    requests,
    holdRequests: (on: boolean) => (hold = on),
    release: () => {
      const p = pending;
      pending = [];
      p.forEach((r) => r());
    },
  };
}

describe('HistoryPager', () => {
  it('pages through 100k calls with the cursor, one request at a time', async () => {
    const h = fakeHistory(100_000);
    const pager = new HistoryPager(h.get, 1000);
    await pager.reset(emptyFilters());
    expect(get(pager.rows)).toHaveLength(1000);
    expect(h.requests[0]).toBe('/api/v1/history?limit=1000');

    // Two loads at once make one request.
    h.holdRequests(true);
    const a = pager.loadMore();
    const b = pager.loadMore();
    expect(a).toBe(b);
    h.release();
    await a;
    h.holdRequests(false);
    expect(h.requests).toHaveLength(2);
    expect(h.requests[1]).toContain('cursor=');

    await pager.ensure(99_999);
    const rows = get(pager.rows);
    expect(rows).toHaveLength(100_000);
    expect(rows[0].id).toBe(100_000);
    expect(rows[99_999].id).toBe(1);
    expect(new Set(rows.map((r) => r.id)).size).toBe(100_000);
    expect(get(pager.done)).toBe(true);
    expect(h.requests).toHaveLength(100);
    await pager.loadMore(); // nothing left: no request
    expect(h.requests).toHaveLength(100);
  });

  it('sends the filters and drops a page that arrives after the filters changed', async () => {
    const h = fakeHistory(500);
    const pager = new HistoryPager(h.get, 100);
    h.holdRequests(true);
    const first = pager.reset({ ...emptyFilters(), server: 'old' });
    const second = pager.reset({ ...emptyFilters(), server: 'fs', outcome: 'error', since: '1h', q: 'read file' });
    h.release();
    await first;
    h.release();
    await second;
    expect(h.requests[1]).toBe('/api/v1/history?server=fs&outcome=error&since=1h&q=read+file&limit=100');
    expect(get(pager.rows)).toHaveLength(100); // one page, not two
  });

  it('shows an error and stops paging', async () => {
    const pager = new HistoryPager(async () => {
      throw new Error('invalid cursor');
    });
    await pager.reset(emptyFilters());
    expect(get(pager.error)).toBe('invalid cursor');
    await pager.ensure(10);
    expect(get(pager.rows)).toHaveLength(0);
  });

  it('shows the snapshot of the last visit until the first page replaces it; live calls stay on top', async () => {
    const h = fakeHistory(300);
    const first = new HistoryPager(h.get, 100);
    await first.reset(emptyFilters());
    const snap = first.snapshot();
    expect(snap.rows.map((r) => r.id).slice(0, 2)).toEqual([300, 299]);
    expect(snap.rows).toHaveLength(100);

    h.holdRequests(true);
    const again = new HistoryPager(h.get, 100);
    const loading = again.reset(emptyFilters(), snap);
    expect(get(again.rows)).toHaveLength(100); // at once, before the daemon answers
    again.prepend(call(400));
    expect(get(again.rows)[0].id).toBe(400);
    h.release();
    await loading;
    const ids = get(again.rows).map((r) => r.id);
    expect(ids).toHaveLength(101); // the live call, then the page; the snapshot's rows gave way
    expect(ids.slice(0, 3)).toEqual([400, 300, 299]);
    expect(new Set(ids).size).toBe(ids.length);

    // Other filters: the snapshot is not theirs.
    h.holdRequests(true);
    const filtered = new HistoryPager(h.get, 100);
    const l2 = filtered.reset({ ...emptyFilters(), server: 'git' }, snap);
    expect(get(filtered.rows)).toHaveLength(0);
    h.release();
    await l2;
  });

  it('puts matching live calls on top, once', async () => {
    const h = fakeHistory(3);
    const pager = new HistoryPager(h.get);
    await pager.reset({ ...emptyFilters(), server: 'fs' });
    expect(pager.prepend(call(10))).toBe(true);
    expect(pager.prepend(call(10))).toBe(false);
    expect(pager.prepend(call(11, { server: 'git' }))).toBe(false);
    expect(get(pager.rows).map((r) => r.id)).toEqual([10, 3, 2, 1]);
  });
});

describe('matches', () => {
  const f = emptyFilters();
  it.each([
    [{}, call(1), true],
    [{ outcome: 'error' }, call(1), false],
    [{ outcome: 'error' }, call(1, { outcome: 'timeout' }), true],
    [{ outcome: 'timeout' }, call(1, { outcome: 'tool_error' }), false],
    [{ client: 'Cursor' }, call(1), true],
    [{ client: 'cursor' }, call(1), true],
    [{ client: 'vscode' }, call(1), false],
    [{ tool: 'read_file' }, call(1), true],
    [{ q: 'READ' }, call(1), true],
    [{ q: 'nothing' }, call(1), false],
    [{ until: '2026-01-01T00:00:00Z' }, call(1), false],
  ])('%j', (extra, c, want) => {
    expect(matches({ ...f, ...extra }, c)).toBe(want);
  });
});

describe('visibleRange', () => {
  it('renders only the rows in view plus a margin', () => {
    expect(visibleRange(0, 340, 34, 100_000, 5)).toEqual([0, 15]);
    expect(visibleRange(34 * 50_000, 340, 34, 100_000, 5)).toEqual([49_995, 50_015]);
    expect(visibleRange(34 * 99_995, 340, 34, 100_000, 5)).toEqual([99_990, 100_000]);
    expect(visibleRange(0, 340, 34, 0, 5)).toEqual([0, 0]);
  });
  it('builds the query of the filters', () => {
    expect(filterQuery({ ...emptyFilters(), tool: 'a b' }, { format: 'csv' })).toBe('?tool=a+b&format=csv');
  });
});

describe('HistoryPager under live traffic', () => {
  // Calls 1..n, newest first; until= is honoured as the daemon does ([.., until)).
  const at = (id: number, extra: Partial<Call> = {}) => call(id, { start: new Date(1e12 + id * 1000).toISOString(), ...extra });
  function daemon(n: number) {
    const all = Array.from({ length: n }, (_, i) => at(n - i));
    const requests: string[] = [];
    const get = async <T>(path: string): Promise<T> => {
      requests.push(path);
      const u = new URL(path, 'http://x');
      const limit = Number(u.searchParams.get('limit') ?? 50);
      const until = u.searchParams.get('until');
      const from = Number(u.searchParams.get('cursor') ?? 0);
      const pool = until ? all.filter((c) => Date.parse(c.start) < Date.parse(until)) : all;
      const calls = pool.slice(from, from + limit);
      return { calls, next: from + limit < pool.length ? String(from + limit) : undefined } as T;
    };
    return { all, get, requests, add: (c: Call) => all.unshift(c) };
  }

  it('puts a batch on top in one update and keeps at most the cap, paging the rest back in', async () => {
    const d = daemon(300);
    const pager = new HistoryPager(d.get, 100, 250);
    await pager.reset(emptyFilters());
    await pager.ensure(150);
    expect(get(pager.rows)).toHaveLength(200);
    let updates = 0;
    const off = pager.rows.subscribe(() => updates++);
    // 120 live calls, oldest first as the stream sends them.
    const live = Array.from({ length: 120 }, (_, i) => at(1000 + i));
    live.forEach(d.add);
    expect(pager.prependMany(live)).toBe(120);
    off();
    expect(updates).toBe(2); // the subscription's first value and one update
    const rows = get(pager.rows);
    expect(rows).toHaveLength(250); // the cap
    expect(rows[0].id).toBe(1119); // newest on top
    expect(rows[119].id).toBe(1000);
    expect(rows[249].id).toBe(300 - 130 + 1); // 130 of the loaded rows kept
    expect(get(pager.done)).toBe(false);
    // Scrolling down pages in the calls let go, from just older than the last kept row.
    await pager.ensure(400);
    const ids = get(pager.rows).map((c) => c.id);
    expect(d.requests[d.requests.length - 1]).toContain('until=');
    expect(ids.slice(250, 260)).toEqual([170, 169, 168, 167, 166, 165, 164, 163, 162, 161]);
    expect(new Set(ids).size).toBe(ids.length); // no duplicates, no gap
    await pager.ensure(10_000);
    expect(get(pager.rows)).toHaveLength(420);
  });

  it('only counts the calls while held, and a reset loads them', async () => {
    const d = daemon(10);
    const pager = new HistoryPager(d.get, 100);
    const f = { ...emptyFilters(), server: 'fs' };
    await pager.reset(f);
    const c = at(11);
    d.add(c);
    expect(pager.prependMany([c, at(12, { server: 'other' })], true)).toBe(1);
    expect(get(pager.held)).toBe(1);
    expect(get(pager.rows)[0].id).toBe(10);
    await pager.reset(f);
    expect(get(pager.held)).toBe(0);
    expect(get(pager.rows)[0].id).toBe(11);
  });

  it('microAfter is one microsecond later, as RFC 3339', async () => {
    const { microAfter } = await import('../lib/history');
    expect(microAfter('2026-12-01T10:00:00.123456Z')).toBe('2026-12-01T10:00:00.123457Z');
    expect(microAfter('2026-12-01T10:00:00Z')).toBe('2026-12-01T10:00:00.000001Z');
    expect(microAfter('2026-12-01T10:00:59.999999Z')).toBe('2026-12-01T10:01:00.000000Z');
    expect(microAfter('2026-12-01T11:00:00.5+01:00')).toBe('2026-12-01T10:00:00.500001Z');
  });
});

describe('call details in words', () => {
  it('names the tool as its server does, the endpoint and the outcome', async () => {
    const { ownName, endpointOf, outcomeText } = await import('../lib/history');
    expect(ownName({ endpoint: '', name: 'everything__echo', method: 'tools/call' })).toBe('echo');
    expect(ownName({ endpoint: 'everything', name: 'a__b', method: 'tools/call' })).toBe('a__b');
    expect(ownName({ endpoint: '', name: '', method: 'resources/read' })).toBe('resources/read');
    expect(ownName({ endpoint: '', name: 'file:///tmp/a__b.txt', method: 'resources/read' })).toBe('file:///tmp/a__b.txt');
    expect(endpointOf({ endpoint: '' })).toBe('/mcp (every server)');
    expect(endpointOf({ endpoint: 'fs' })).toBe('/mcp/fs');
    expect(endpointOf({ endpoint: 'p/coding' })).toBe('/mcp/p/coding (profile coding)');
    expect(outcomeText('server_unavailable')).toBe('server unavailable');
    // A profile's names are prefixed as /mcp's; the daemon's tool wins.
    expect(ownName({ endpoint: 'p/coding', name: 'filesystem__list_directory', method: 'tools/call' })).toBe('list_directory');
    expect(ownName({ endpoint: '', name: 'x__cut_1a2b3c4d', method: 'tools/call', tool: 'a_very_long_tool_name' })).toBe('a_very_long_tool_name');
  });

  it('shows server and tool as two fields the same way on every endpoint, the unknown marked, and both client names', async () => {
    const { serverText, toolText, clientText, unknownText } = await import('../lib/history');
    const base = { method: 'tools/call', clientLabel: 'cli', clientName: 'cursor' };
    const rows = [
      { ...base, endpoint: '', name: 'alpha__echo', server: 'alpha', tool: 'echo' },
      { ...base, endpoint: 'alpha', name: 'echo', server: 'alpha', tool: 'echo' },
      { ...base, endpoint: 'p/coding', name: 'alpha__echo', server: 'alpha', tool: 'echo' },
    ];
    for (const r of rows) expect([serverText(r), toolText(r), clientText(r)]).toEqual(['alpha', 'echo', 'cli · cursor']);
    const noServer = { ...base, endpoint: '', name: 'nosuch__tool', server: 'nosuch', tool: 'tool', unknown: 'server' as const };
    expect([serverText(noServer), toolText(noServer), unknownText(noServer)]).toEqual(['nosuch (unknown)', 'tool', 'no server "nosuch" is configured']);
    const noTool = { ...base, endpoint: '', name: 'alpha__nosuch', server: 'alpha', tool: 'nosuch', unknown: 'tool' as const };
    expect([serverText(noTool), toolText(noTool), unknownText(noTool)]).toEqual(['alpha', 'nosuch (unknown)', 'alpha offers no tool "nosuch" on this endpoint']);
    const bare = { ...base, endpoint: '', name: 'echo', server: '', tool: 'echo', unknown: 'server' as const };
    expect([serverText(bare), toolText(bare)]).toEqual(['', 'echo (unknown)']);
    expect(clientText({ clientLabel: 'cursor', clientName: 'cursor' })).toBe('cursor');
    expect(clientText({ clientLabel: 'cli', clientName: '' })).toBe('cli');
    expect(clientText({ clientLabel: '', clientName: 'ux-driver' })).toBe('ux-driver');
  });

  it('a live call filtered by tool matches its own name or the name the client used', async () => {
    const { matches, emptyFilters } = await import('../lib/history');
    const c = { id: 1, start: '', duration: 0, clientLabel: 'cli', clientName: 'x', clientVersion: '', session: '', endpoint: '', server: 'alpha', method: 'tools/call', name: 'alpha__echo', tool: 'echo', outcome: 'ok', responseSize: 0 };
    expect(matches({ ...emptyFilters(), tool: 'echo' }, c)).toBe(true);
    expect(matches({ ...emptyFilters(), tool: 'alpha__echo' }, c)).toBe(true);
    expect(matches({ ...emptyFilters(), tool: 'sleep' }, c)).toBe(false);
  });
});
