// The dashboard's shared state, made once in main.ts and handed to every
// page through Svelte context: one event stream, one servers store.

import { getContext, setContext } from 'svelte';
import { writable } from 'svelte/store';
import { api } from './api';
import { EventStream } from './events';
import { ServersStore } from './servers';
import { InFlight } from './inflight';
import type { Status } from './types';
import type { HistorySnapshot } from './history';

export interface AppContext {
  stream: EventStream;
  servers: ServersStore;
  inflight: InFlight;
  status: ReturnType<typeof writable<Status | null>>;
  statusError: ReturnType<typeof writable<string>>;
  dropped: ReturnType<typeof writable<number>>;
  refreshStatus: () => Promise<void>;
  /** The History table as the user left it (see HistorySnapshot). */
  history: { snapshot?: HistorySnapshot };
}

const KEY = Symbol('switchboard');

export function createAppContext(stream = new EventStream()): AppContext {
  const servers = new ServersStore({ get: api.get }, stream);
  const inflight = new InFlight(stream);
  const status = writable<Status | null>(null);
  const statusError = writable('');
  const dropped = writable(0);
  const refreshStatus = async () => {
    try {
      status.set(await api.get<Status>('/api/v1/status'));
      statusError.set('');
    } catch (err) {
      statusError.set((err as Error).message);
    }
  };
  stream.on('dropped', (d: { count?: number }) => dropped.update((n) => n + (d?.count ?? 0)));
  stream.on('config', () => void refreshStatus());
  stream.on('reset', () => void refreshStatus());
  // A reset means events were missed: the snapshot may lack calls.
  const history: AppContext['history'] = {};
  stream.on('reset', () => (history.snapshot = undefined));
  return { stream, servers, inflight, status, statusError, dropped, refreshStatus, history };
}

export function provideApp(ctx: AppContext): void {
  setContext(KEY, ctx);
}

/** appContext is the context to mount a page with outside the app (tests). */
export function appContext(ctx: AppContext): Map<symbol, AppContext> {
  return new Map([[KEY, ctx]]);
}

export function useApp(): AppContext {
  return getContext<AppContext>(KEY);
}
