// A server's lifecycle: what the history recorded of it (starts, exits,
// crashes, config changes, installs) followed by its state events as they
// come.
import type { StateEvent } from './types';

/** How many events the Lifecycle tab shows. */
export const LIFECYCLE_LIMIT = 200;

type Get = <T>(path: string) => Promise<T>;

/** loadLifecycle returns the recorded events of server, oldest first. */
export async function loadLifecycle(get: Get, server: string): Promise<StateEvent[]> {
  const q = new URLSearchParams({ server, limit: String(LIFECYCLE_LIMIT) });
  return (await get<StateEvent[] | null>(`/api/v1/lifecycle?${q}`)) ?? [];
}

// The feed's times have nanoseconds, the history's microseconds: events are
// the same when they agree to the millisecond.
const key = (e: StateEvent) => `${Math.floor(Date.parse(e.time))}|${e.kind}|${e.pid ?? ''}`;

/**
 * mergeLifecycle puts the recorded events (oldest first) and the live ones
 * (newest first) together, newest first. A live event the recording
 * already holds, or older than its newest event, is left out.
 */
export function mergeLifecycle(recorded: StateEvent[], live: StateEvent[]): StateEvent[] {
  const seen = new Set(recorded.map(key));
  const newest = recorded.length ? Date.parse(recorded[recorded.length - 1].time) : -Infinity;
  const fresh = live.filter((e) => Date.parse(e.time) >= newest && !seen.has(key(e)));
  return [...fresh, ...recorded.slice().reverse()].slice(0, LIFECYCLE_LIMIT);
}

/** severity is how an event's kind is shown: a crash stands out. */
export function severity(kind: string): 'bad' | 'warn' | '' {
  if (kind === 'crashed' || kind === 'failing') return 'bad';
  if (kind === 'backoff' || kind === 'tool-held') return 'warn';
  return '';
}
