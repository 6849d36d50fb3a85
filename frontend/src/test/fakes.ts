// Test doubles shared by the unit tests: a scriptable EventSource and a
// manual timer queue, so that reconnect timing is tested without waiting.

import type { EventSourceLike } from '../lib/events';

export class FakeEventSource implements EventSourceLike {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSED = 2;
  readyState = FakeEventSource.CONNECTING;
  onopen: ((ev: Event) => unknown) | null = null;
  onerror: ((ev: Event) => unknown) | null = null;
  closed = false;
  private listeners = new Map<string, ((ev: MessageEvent) => void)[]>();

  constructor(readonly url: string) {}

  addEventListener(type: string, fn: (ev: MessageEvent) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
  }
  close(): void {
    this.closed = true;
    this.readyState = FakeEventSource.CLOSED;
  }
  open(): void {
    this.readyState = FakeEventSource.OPEN;
    this.onopen?.(new Event('open'));
  }
  emit(type: string, data: unknown, id?: number): void {
    const ev = new MessageEvent(type, { data: typeof data === 'string' ? data : JSON.stringify(data), lastEventId: id === undefined ? '' : String(id) });
    for (const fn of this.listeners.get(type) ?? []) fn(ev);
  }
  /** fail simulates a dropped connection; closed=true is one the browser gave up on. */
  fail(closed: boolean): void {
    this.readyState = closed ? FakeEventSource.CLOSED : FakeEventSource.CONNECTING;
    this.onerror?.(new Event('error'));
  }
}

export class ManualTimers {
  queue: { fn: () => void; ms: number; id: number }[] = [];
  private next = 1;
  set = (fn: () => void, ms: number): unknown => {
    const id = this.next++;
    this.queue.push({ fn, ms, id });
    return id;
  };
  clear = (id: unknown): void => {
    this.queue = this.queue.filter((t) => t.id !== id);
  };
  runAll(): number[] {
    const ran = this.queue.map((t) => t.ms);
    const q = this.queue;
    this.queue = [];
    for (const t of q) t.fn();
    return ran;
  }
}

/** fakeApi answers GETs from a table of path → value (or Error) and records the paths. */
export function fakeApi(routes: Record<string, unknown | ((path: string) => unknown)>) {
  const calls: string[] = [];
  const get = async <T>(path: string): Promise<T> => {
    calls.push(path);
    const key = Object.keys(routes).find((k) => path === k || path.startsWith(k + '?'));
    if (key === undefined) throw new Error(`no fake route for ${path}`);
    const v = routes[key];
    const out = typeof v === 'function' ? (v as (p: string) => unknown)(path) : v;
    if (out instanceof Error) throw out;
    return structuredClone(await out) as T;
  };
  return { get, calls };
}

export const flush = () => new Promise((r) => setTimeout(r, 0));
