// Calls while they run: the daemon sends call-start when a call is on its
// way to a server, call-progress when the server reports progress for it
// (if its client asked for progress), and call when it ended (and was
// recorded). InFlight keeps the started calls that have not ended, with
// their latest progress, in batches like every live view.

import { writable } from 'svelte/store';
import type { EventStream } from './events';
import { FrameBatcher, paced, type Schedule } from './batch';
import type { Call } from './types';

export interface CallStart {
  start: string;
  server: string;
  endpoint: string;
  method: string;
  name: string;
  clientLabel: string;
  clientName: string;
  session: string;
  /** The tool as its server calls it (see Call.tool). */
  tool?: string;
  /** The latest progress the server reported, if any. */
  progress?: Progress;
}

export interface Progress {
  progress: number;
  /** 0 or absent: the server does not know the total. */
  total?: number;
  message?: string;
}

/** A call-progress event: the call is named as its call-start. */
export interface ProgressEvent extends Progress {
  start: string;
  server: string;
  name: string;
}

/**
 * progressText is a call's progress in words: "45 % · slept 315 of 700 ms",
 * or the count and message when the total is unknown.
 */
export function progressText(p: Progress | undefined): string {
  if (!p) return '';
  const n = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));
  const amount = p.total && p.total > 0 ? `${Math.min(100, Math.floor((p.progress / p.total) * 100))} %` : n(p.progress);
  return p.message ? `${amount} · ${p.message}` : amount;
}

/** progressShare is the fraction done (0..1), or undefined without a total. */
export function progressShare(p: Progress | undefined): number | undefined {
  if (!p || !p.total || p.total <= 0) return undefined;
  return Math.max(0, Math.min(1, p.progress / p.total));
}

/** A started call and its end share the server, the name and the start (to the millisecond). */
export function callKey(c: { server: string; name: string; start: string }): string {
  return `${c.server}\u0000${c.name}\u0000${Math.floor(Date.parse(c.start))}`;
}

/** Calls older than this are let go (their end was lost: a dropped history record). */
export const STALE_MS = 15 * 60_000;

type Change = { start: CallStart } | { end: Call } | { progress: ProgressEvent };

export class InFlight {
  /** The running calls, oldest first. */
  readonly calls = writable<CallStart[]>([]);
  private list: CallStart[] = [];
  private readonly batch: FrameBatcher<Change>;

  constructor(
    stream?: EventStream,
    private readonly now: () => number = Date.now,
    schedule: Schedule = paced(250),
  ) {
    this.batch = new FrameBatcher((changes) => this.apply(changes), Infinity, schedule);
    if (stream) {
      stream.on('call-start', (c: CallStart) => this.batch.push({ start: c }));
      stream.on('call-progress', (p: ProgressEvent) => this.batch.push({ progress: p }));
      stream.on('call', (c: Call) => this.batch.push({ end: c }));
      // Ends may have been missed: start over rather than keep ghosts.
      stream.on('reset', () => this.clear());
    }
  }

  /** apply takes starts and ends in the order they came, in one update. */
  apply(changes: Change[]): void {
    let list = this.list;
    let changed = false;
    for (const ch of changes) {
      if ('start' in ch) {
        if (!ch.start?.server) continue;
        list = changed ? list : list.slice();
        list.push(ch.start);
        changed = true;
      } else if ('progress' in ch) {
        if (!ch.progress?.server) continue;
        const key = callKey(ch.progress);
        const i = list.findIndex((s) => callKey(s) === key);
        if (i < 0) continue;
        list = changed ? list : list.slice();
        const { progress, total, message } = ch.progress;
        list[i] = { ...list[i], progress: { progress, total, message } };
        changed = true;
      } else if (ch.end?.server) {
        const key = callKey(ch.end);
        const i = list.findIndex((s) => callKey(s) === key);
        if (i < 0) continue;
        list = changed ? list : list.slice();
        list.splice(i, 1);
        changed = true;
      }
    }
    const cutoff = this.now() - STALE_MS;
    if (list.some((s) => Date.parse(s.start) < cutoff)) {
      list = list.filter((s) => Date.parse(s.start) >= cutoff);
      changed = true;
    }
    if (changed) {
      this.list = list;
      this.calls.set(list);
    }
  }

  clear(): void {
    this.list = [];
    this.calls.set([]);
  }
}
