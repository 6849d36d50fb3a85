// The servers store: the /servers snapshot kept live by the event stream.
// state events move a server's state and feed its crash history; sample events
// feed the CPU and RSS sparklines; call events count calls and errors on top
// of the /stats baseline; config and reset events refetch the snapshot.

import { writable, get, type Readable } from 'svelte/store';
import type { AuthEvent, Call, SampleEvent, ServerView, Stat, StateEvent } from './types';
import { withAuthEvent } from './signin';
import type { EventStream } from './events';
import { FrameBatcher, paced, type Schedule } from './batch';

export interface Spark {
  times: number[];
  cpu: number[];
  rss: number[];
}

export interface CallCounts {
  count: number;
  errors: number;
  lastError?: string;
}

export interface ServersDeps {
  get: <T>(path: string) => Promise<T>;
  now?: () => number;
  /** When batched call events are counted (default: the next animation frame). */
  schedule?: Schedule;
}

/** How many samples a sparkline keeps (2 s apart: 4 minutes). */
export const SPARK_POINTS = 120;
/** The window the calls-per-minute figure starts from. */
export const RATE_WINDOW_MS = 15 * 60 * 1000;
export class ServersStore {
  readonly servers = writable<ServerView[]>([]);
  readonly loaded = writable(false);
  readonly error = writable('');
  readonly sparks = writable<Record<string, Spark>>({});
  readonly counts = writable<Record<string, CallCounts>>({});
  private windowStart = 0;
  private readonly now: () => number;
  private refetching = new Map<string, Promise<void>>();
  /** Servers whose state changed while their refetch was in flight: fetch again. */
  private again = new Set<string>();
  /** Counts state events, so a snapshot taken across one is taken again. */
  private stateEvents = 0;
  /** Call events, counted once per frame (hundreds can come in a second). */
  private readonly callBatch: FrameBatcher<Call>;

  constructor(
    private readonly deps: ServersDeps,
    stream?: EventStream,
  ) {
    this.now = deps.now ?? Date.now;
    this.callBatch = new FrameBatcher((calls) => this.applyCalls(calls), Infinity, deps.schedule ?? paced(250));
    if (stream) {
      stream.on('state', (d) => this.applyState(d));
      stream.on('sample', (d) => this.applySample(d));
      stream.on('call', (d) => this.callBatch.push(d));
      // A server's tools were listed (the first time just after an install
      // or an add): its view has them now.
      stream.on('tools', (d: { server?: string }) => d?.server && void this.refreshOne(d.server));
      // A remote server's sign-in moved: the event has the state, the
      // view the link of a sign-in in progress.
      stream.on('auth', (d) => this.applyAuth(d));
      stream.on('config', () => void this.refresh());
      stream.on('reset', () => void this.refresh());
    }
  }

  /** refresh fetches the servers and the call stats of the rate window. */
  async refresh(): Promise<void> {
    try {
      // A state event that arrives while the snapshot is on its way may be
      // older or newer than it: take the snapshot again until none did.
      let list: ServerView[] | undefined;
      let stats: Stat[] | undefined;
      for (let tries = 0; tries < 5; tries++) {
        const seen = this.stateEvents;
        [list, stats] = await Promise.all([
          this.deps.get<ServerView[]>('/api/v1/servers'),
          this.deps.get<Stat[]>('/api/v1/stats?since=15m&by=server').catch(() => [] as Stat[]),
        ]);
        if (seen === this.stateEvents) break;
      }
      this.servers.set(list ?? []);
      this.windowStart = this.now() - RATE_WINDOW_MS;
      const counts: Record<string, CallCounts> = {};
      for (const s of stats ?? []) counts[s.server] = { count: s.count, errors: s.errors };
      this.counts.set(counts);
      // Seed a sparkline with the snapshot's latest sample.
      this.sparks.update((sp) => {
        for (const v of list ?? []) {
          if (v.usage && !sp[v.name]) sp[v.name] = { times: [this.now()], cpu: [v.usage.cpuPercent], rss: [v.usage.rssBytes] };
        }
        return { ...sp };
      });
      this.error.set('');
    } catch (err) {
      this.error.set((err as Error).message);
    } finally {
      this.loaded.set(true);
    }
  }

  /** refreshOne refetches one server (its processes changed); at most one at a time per server. */
  refreshOne(name: string): Promise<void> {
    const running = this.refetching.get(name);
    if (running) {
      // The answer on its way may predate what just happened: ask again after it.
      this.again.add(name);
      return running;
    }
    const p = this.deps
      .get<ServerView>(`/api/v1/servers/${encodeURIComponent(name)}`)
      .then((v) => this.upsert(v))
      .catch(() => undefined)
      .finally(() => {
        this.refetching.delete(name);
        if (this.again.delete(name)) void this.refreshOne(name);
      });
    this.refetching.set(name, p);
    return p;
  }

  upsert(v: ServerView): void {
    this.servers.update((list) => {
      const i = list.findIndex((s) => s.name === v.name);
      if (i >= 0) {
        const next = list.slice();
        next[i] = v;
        return next;
      }
      return [...list, v].sort((a, b) => a.name.localeCompare(b.name));
    });
  }

  remove(name: string): void {
    this.servers.update((list) => list.filter((s) => s.name !== name));
  }

  applyState(ev: StateEvent): void {
    if (!ev || !ev.server) return;
    this.stateEvents++;
    let known = false;
    this.servers.update((list) =>
      list.map((s) => {
        if (s.name !== ev.server) return s;
        known = true;
        const next = { ...s };
        if (ev.state && s.state !== 'disabled') next.state = ev.state;
        if (ev.kind === 'crashed') {
          next.restarts = (s.restarts ?? 0) + 1;
          if (ev.message) next.lastError = ev.message;
        }
        if (ev.kind === 'failing' && ev.message) next.lastError = ev.message;
        return next;
      }),
    );
    // Process-level events change the process list, which only the
    // snapshot has: refetch that one server. A server the list does not
    // have yet (just added; the list is on its way) is fetched too, and
    // one that went down: stopped by the user it has no last error any
    // more (it is Stopped, not Failed), which only the snapshot tells.
    if (!known || ev.kind !== 'state' || ev.state === 'stopped') void this.refreshOne(ev.server);
  }

  /** setAuth puts a sign-in state the API answered (login, logout) into the server's view. */
  setAuth(name: string, auth: ServerView['auth']): void {
    this.servers.update((list) => list.map((s) => (s.name === name ? { ...s, auth } : s)));
  }

  applyAuth(ev: AuthEvent): void {
    if (!ev || !ev.server || !ev.state) return;
    this.servers.update((list) => list.map((s) => (s.name === ev.server ? { ...s, auth: withAuthEvent(s.auth, ev) } : s)));
    void this.refreshOne(ev.server);
  }

  applySample(ev: SampleEvent): void {
    if (!ev || !ev.server) return;
    const t = ev.time ? Date.parse(ev.time) : this.now();
    this.sparks.update((sp) => {
      const old = sp[ev.server] ?? { times: [], cpu: [], rss: [] };
      const cut = old.times.length >= SPARK_POINTS ? 1 : 0;
      return {
        ...sp,
        [ev.server]: {
          times: [...old.times.slice(cut), t],
          cpu: [...old.cpu.slice(cut), ev.cpuPercent],
          rss: [...old.rss.slice(cut), ev.rssBytes],
        },
      };
    });
    this.servers.update((list) =>
      list.map((s) => (s.name === ev.server ? { ...s, usage: { cpuPercent: ev.cpuPercent, rssBytes: ev.rssBytes, processes: ev.processes } } : s)),
    );
  }

  applyCall(c: Call): void {
    this.applyCalls([c]);
  }

  /** applyCalls counts calls and errors per server, in one update. */
  applyCalls(calls: Call[]): void {
    this.counts.update((all) => {
      const next = { ...all };
      for (const c of calls) {
        if (!c || !c.server) continue;
        const old = next[c.server] ?? { count: 0, errors: 0 };
        const failed = c.outcome !== 'ok';
        next[c.server] = {
          count: old.count + 1,
          errors: old.errors + (failed ? 1 : 0),
          lastError: failed ? c.error || c.outcome : old.lastError,
        };
      }
      return next;
    });
  }

  /** callsPerMinute over the rate window (15 min before the snapshot, up to now). */
  callsPerMinute(name: string, counts = get(this.counts)): number {
    const c = counts[name];
    if (!c) return 0;
    const minutes = Math.max(1, (this.now() - this.windowStart) / 60000);
    return c.count / minutes;
  }

  errorRate(name: string, counts = get(this.counts)): number {
    const c = counts[name];
    if (!c || c.count === 0) return 0;
    return c.errors / c.count;
  }

  get list(): Readable<ServerView[]> {
    return this.servers;
  }
}
