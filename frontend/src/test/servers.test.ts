import { describe, expect, it } from 'vitest';
import { get } from 'svelte/store';
import { EventStream } from '../lib/events';
import { ServersStore, SPARK_POINTS } from '../lib/servers';
import type { ServerView } from '../lib/types';
import { FakeEventSource, fakeApi, flush } from './fakes';

const view = (name: string, state = 'running', extra: Partial<ServerView> = {}): ServerView => ({
  name,
  config: { command: 'x' },
  enabled: true,
  state,
  mode: 'shared',
  processes: [],
  restarts: 0,
  recentLogs: [],
  ...extra,
});

function setup(routes: Record<string, unknown> = {}) {
  let t = 1_000_000;
  const api = fakeApi({
    '/api/v1/servers': [view('alpha'), view('beta', 'stopped')],
    '/api/v1/stats': [{ server: 'alpha', count: 30, errors: 3, errorRate: 0.1, p50: 1, p95: 2 }],
    '/api/v1/servers/alpha': view('alpha', 'running', { processes: [{ pid: 7, state: 'ready', started: '', inFlight: 0, leased: false }] }),
    ...routes,
  });
  const made: FakeEventSource[] = [];
  const stream = new EventStream({ factory: (u) => (made.push(new FakeEventSource(u)), made[made.length - 1]) });
  let frames: (() => void)[] = [];
  const store = new ServersStore({ get: api.get, now: () => t, schedule: (fn) => frames.push(fn) }, stream);
  stream.start();
  const frame = () => {
    const f = frames;
    frames = [];
    f.forEach((fn) => fn());
  };
  return { api, store, es: () => made[made.length - 1], advance: (ms: number) => (t += ms), frame };
}

describe('ServersStore', () => {
  it('fetches a server again when its tools were listed, and when it went down (stopped by the user: no last error)', async () => {
    let listed = false;
    let lastError: string | undefined = 'crashed';
    const { store, es, api } = setup({
      '/api/v1/servers': () => [view('alpha', 'running', { listed, tools: [] }), view('beta', 'failing', { lastError })],
      '/api/v1/servers/alpha': () => view('alpha', 'running', { listed, tools: listed ? [{ name: 'echo' }] : [] }),
      '/api/v1/servers/beta': () => view('beta', 'stopped', { lastError }),
    });
    await store.refresh();
    expect(get(store.servers)[0].listed).toBe(false);
    listed = true;
    es().emit('tools', { server: 'alpha' }, 1);
    await flush();
    expect(api.calls).toContain('/api/v1/servers/alpha');
    expect(get(store.servers)[0]).toMatchObject({ listed: true, tools: [{ name: 'echo' }] });
    lastError = undefined;
    es().emit('state', { server: 'beta', kind: 'state', state: 'stopped' }, 2);
    await flush();
    expect(get(store.servers)[1]).toMatchObject({ state: 'stopped' });
    expect(get(store.servers)[1].lastError).toBeUndefined();
  });

  it('loads the servers and the call stats of the last 15 minutes', async () => {
    const { store, api } = setup();
    await store.refresh();
    expect(get(store.servers).map((s) => s.name)).toEqual(['alpha', 'beta']);
    expect(get(store.loaded)).toBe(true);
    expect(api.calls).toContain('/api/v1/stats?since=15m&by=server');
    expect(store.callsPerMinute('alpha')).toBeCloseTo(2); // 30 calls / 15 min
    expect(store.errorRate('alpha')).toBeCloseTo(0.1);
    expect(store.callsPerMinute('beta')).toBe(0);
  });

  it('takes the snapshot again when a state event arrives while it is on its way', async () => {
    // The daemon's answer was made while beta was starting; beta's
    // "running" event overtakes it on the stream.
    let state = 'starting';
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let first = true;
    const { store, es } = setup({
      '/api/v1/servers': async () => {
        const answer = [view('alpha'), view('beta', state)];
        if (first) {
          first = false;
          await gate;
        }
        return answer;
      },
      '/api/v1/servers/beta': () => view('beta', state),
    });
    const loading = store.refresh();
    await flush();
    state = 'running';
    es().emit('state', { server: 'beta', time: '2026-11-30T10:00:00Z', kind: 'state', state: 'running' }, 1);
    release();
    await loading;
    await flush();
    expect(get(store.servers).find((s) => s.name === 'beta')?.state).toBe('running');
  });

  it('fetches a server it does not list yet when that server reports its state', async () => {
    const { store, es } = setup({ '/api/v1/servers/gamma': view('gamma', 'running') });
    await store.refresh();
    es().emit('state', { server: 'gamma', time: '2026-11-30T10:00:00Z', kind: 'state', state: 'running' }, 1);
    await flush();
    await flush();
    expect(get(store.servers).map((s) => `${s.name}:${s.state}`)).toContain('gamma:running');
  });

  it('shows a load error where it happened and keeps going', async () => {
    const { store } = setup({ '/api/v1/servers': new Error('daemon down') });
    await store.refresh();
    expect(get(store.error)).toBe('daemon down');
    expect(get(store.loaded)).toBe(true);
  });

  it('applies state events: state, restarts, last error and a refetch of that server', async () => {
    const { store, es, api } = setup();
    await store.refresh();
    es().emit('state', { server: 'alpha', time: '2026-11-30T10:00:00Z', kind: 'crashed', state: 'backoff', pid: 7, exit: 'exit status 1', message: 'boom' }, 1);
    let alpha = get(store.servers)[0];
    expect(alpha.state).toBe('backoff');
    expect(alpha.restarts).toBe(1);
    expect(alpha.lastError).toBe('boom');
    await flush();
    expect(api.calls).toContain('/api/v1/servers/alpha');
    alpha = get(store.servers)[0];
    expect(alpha.processes.map((p) => p.pid)).toEqual([7]);

    es().emit('state', { server: 'beta', kind: 'state', state: 'starting' }, 2);
    expect(get(store.servers)[1].state).toBe('starting');
    es().emit('state', { server: 'nobody', kind: 'crashed', state: 'failing' }, 3);
    expect(get(store.servers).map((s) => s.state)).toEqual(['running', 'starting']);
  });

  it('never shows a disabled server as running', async () => {
    const { store, es } = setup({ '/api/v1/servers': [view('alpha', 'disabled', { enabled: false })] });
    await store.refresh();
    es().emit('state', { server: 'alpha', kind: 'state', state: 'stopped' }, 1);
    expect(get(store.servers)[0].state).toBe('disabled');
  });

  it('feeds sample events into capped sparklines and the current usage', async () => {
    const { store, es } = setup();
    await store.refresh();
    for (let i = 0; i < SPARK_POINTS + 10; i++) {
      es().emit('sample', { server: 'alpha', time: new Date(1e12 + i * 2000).toISOString(), cpuPercent: i, rssBytes: 1000 + i, processes: 1 }, i + 1);
    }
    const sp = get(store.sparks).alpha;
    expect(sp.cpu).toHaveLength(SPARK_POINTS);
    expect(sp.cpu[0]).toBe(10);
    expect(sp.cpu[SPARK_POINTS - 1]).toBe(SPARK_POINTS + 9);
    expect(sp.times[1] - sp.times[0]).toBe(2000);
    expect(get(store.servers)[0].usage).toEqual({ cpuPercent: SPARK_POINTS + 9, rssBytes: 1000 + SPARK_POINTS + 9, processes: 1 });
  });

  it('counts call events on top of the stats baseline', async () => {
    const { store, es, advance, frame } = setup();
    await store.refresh();
    advance(5 * 60_000); // the window is now 20 minutes
    let updates = 0;
    const off = store.counts.subscribe(() => updates++);
    es().emit('call', { id: 1, server: 'alpha', outcome: 'ok' }, 1);
    es().emit('call', { id: 2, server: 'alpha', outcome: 'tool_error', error: 'bad input' }, 2);
    es().emit('call', { id: 3, server: 'beta', outcome: 'ok' }, 3);
    expect(get(store.counts).alpha).toEqual({ count: 30, errors: 3 }); // not before the frame
    frame();
    off();
    expect(updates).toBe(2); // the subscription's first value, then one update for three calls
    expect(get(store.counts).alpha).toEqual({ count: 32, errors: 4, lastError: 'bad input' });
    expect(store.callsPerMinute('alpha')).toBeCloseTo(32 / 20);
    expect(store.errorRate('alpha')).toBeCloseTo(4 / 32);
    expect(store.callsPerMinute('beta')).toBeCloseTo(1 / 20);
  });

  it('refetches on config and reset events', async () => {
    const { store, es, api } = setup();
    await store.refresh();
    const before = api.calls.filter((c) => c === '/api/v1/servers').length;
    es().emit('config', {}, 1);
    es().emit('reset', {}, 2);
    await flush();
    expect(api.calls.filter((c) => c === '/api/v1/servers').length).toBe(before + 2);
  });
});
