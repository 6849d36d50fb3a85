// The one live connection of the dashboard: /api/v1/events (SSE). Every page
// subscribes here; nothing polls.
//
// EventSource reconnects by itself after a dropped connection and sends
// Last-Event-ID. When it gives up (readyState CLOSED: an HTTP error, the
// daemon restarting), this store opens a new one with ?since=<last id>, with
// a growing delay, so that no event is missed. A `reset` event (our last id
// is too old for the daemon's buffer) tells every subscriber to refetch its
// snapshot.

import { writable, type Readable } from 'svelte/store';

export type StreamState = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface EventSourceLike {
  readonly readyState: number;
  onopen: ((ev: Event) => unknown) | null;
  onerror: ((ev: Event) => unknown) | null;
  addEventListener(type: string, listener: (ev: MessageEvent) => void): void;
  close(): void;
}

export type EventSourceFactory = (url: string) => EventSourceLike;

export type Handler = (data: any, id: number) => void;

/** The event types of the daemon's stream. */
export const EVENT_TYPES = ['call', 'call-start', 'call-progress', 'log', 'state', 'sample', 'install', 'config', 'tools', 'dropped', 'approval', 'auth', 'ask', 'reset'] as const;

export interface StreamOptions {
  url?: string;
  factory?: EventSourceFactory;
  /** Delays (ms) before the n-th manual reconnect; the last repeats. */
  backoff?: number[];
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (t: unknown) => void;
}

const CLOSED = 2;

export class EventStream {
  private handlers = new Map<string, Set<Handler>>();
  private es: EventSourceLike | null = null;
  private timer: unknown = null;
  private attempts = 0;
  private stopped = true;
  private readonly url: string;
  private readonly factory: EventSourceFactory;
  private readonly backoff: number[];
  private readonly setTimer: (fn: () => void, ms: number) => unknown;
  private readonly clearTimer: (t: unknown) => void;
  private readonly stateStore = writable<StreamState>('closed');
  /** lastId is the id of the last event seen, 0 before the first. */
  lastId = 0;

  constructor(opts: StreamOptions = {}) {
    this.url = opts.url ?? '/api/v1/events';
    this.factory = opts.factory ?? ((u) => new EventSource(u, { withCredentials: true }) as EventSourceLike);
    this.backoff = opts.backoff ?? [1000, 2000, 5000, 10000, 30000];
    this.setTimer = opts.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
    this.clearTimer = opts.clearTimer ?? ((t) => clearTimeout(t as ReturnType<typeof setTimeout>));
  }

  get state(): Readable<StreamState> {
    return this.stateStore;
  }

  /** on subscribes to one event type and returns the unsubscribe function. */
  on(type: string, fn: Handler): () => void {
    let set = this.handlers.get(type);
    if (!set) this.handlers.set(type, (set = new Set()));
    set.add(fn);
    return () => set!.delete(fn);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect('connecting');
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.clearTimer(this.timer);
    this.timer = null;
    this.es?.close();
    this.es = null;
    this.stateStore.set('closed');
  }

  private connect(state: StreamState): void {
    this.stateStore.set(state);
    const url = this.lastId > 0 ? `${this.url}?since=${this.lastId}` : this.url;
    const es = this.factory(url);
    this.es = es;
    es.onopen = () => {
      if (this.es !== es) return;
      this.attempts = 0;
      this.stateStore.set('open');
    };
    es.onerror = () => {
      if (this.es !== es || this.stopped) return;
      if (es.readyState === CLOSED) {
        // The browser gave up; reconnect ourselves from the last id.
        es.close();
        this.es = null;
        const delay = this.backoff[Math.min(this.attempts, this.backoff.length - 1)];
        this.attempts++;
        this.stateStore.set('reconnecting');
        this.timer = this.setTimer(() => {
          this.timer = null;
          if (!this.stopped) this.connect('reconnecting');
        }, delay);
      } else {
        // The browser retries by itself with Last-Event-ID.
        this.stateStore.set('reconnecting');
      }
    };
    for (const type of EVENT_TYPES) {
      es.addEventListener(type, (ev: MessageEvent) => {
        if (this.es !== es) return;
        this.dispatch(type, ev);
      });
    }
  }

  /** dispatch delivers one message; exported for the stream's own tests. */
  dispatch(type: string, ev: { data: string; lastEventId?: string }): void {
    const id = Number(ev.lastEventId);
    // Ids only grow within one daemon; a restarted daemon starts again and
    // answers an old id with reset, so the last id seen is simply kept.
    if (Number.isFinite(id) && id > 0) this.lastId = id;
    let data: unknown = {};
    if (ev.data) {
      try {
        data = JSON.parse(ev.data);
      } catch {
        console.warn(`switchboard: ${type} event with invalid JSON`, ev.data);
        return;
      }
    }
    for (const fn of this.handlers.get(type) ?? []) {
      try {
        fn(data, id);
      } catch (err) {
        console.error(`switchboard: ${type} handler failed`, err);
      }
    }
  }
}
