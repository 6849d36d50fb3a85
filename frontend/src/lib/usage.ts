// The Usage page's arithmetic: windows, buckets on clock boundaries,
// integer ticks for counts, and samples turned into uPlot's aligned series.

import type { Call, Sample, TimeStat } from './types';

export const WINDOWS = [
  { key: '15m', label: '15 min', ms: 15 * 60_000, bucket: 30_000, step: '30s' },
  { key: '1h', label: '1 h', ms: 3_600_000, bucket: 60_000, step: '1m' },
  { key: '24h', label: '24 h', ms: 86_400_000, bucket: 15 * 60_000, step: '15m' },
  { key: '168h', label: '7 d', ms: 7 * 86_400_000, bucket: 2 * 3_600_000, step: '2h' },
] as const;

export type UsageWindow = (typeof WINDOWS)[number];

export type Aligned = { names: string[]; data: (number | null)[][] };

/** alignSamples makes one x axis (seconds) and one series per server. */
export function alignSamples(samples: Sample[], pick: (s: Sample) => number): Aligned {
  const names = [...new Set(samples.map((s) => s.server))].sort();
  const times = [...new Set(samples.map((s) => Math.floor(Date.parse(s.time) / 1000)))].sort((a, b) => a - b);
  const index = new Map(times.map((t, i) => [t, i]));
  const series = names.map(() => new Array<number | null>(times.length).fill(null));
  for (const s of samples) {
    const i = index.get(Math.floor(Date.parse(s.time) / 1000));
    if (i !== undefined) series[names.indexOf(s.server)][i] = pick(s);
  }
  return { names, data: [times, ...series] };
}

/** bucketStart is the start of t's bucket: a multiple of bucket ms since the epoch, as the daemon buckets. */
export function bucketStart(t: number, bucket: number): number {
  return Math.floor(t / bucket) * bucket;
}

/**
 * addCalls counts live calls into a timeline of bucket ms (from the
 * daemon): into their bucket, adding the buckets time has reached (empty
 * ones too) and letting go of those that left the window. Latencies of the
 * buckets it touches are left as they were (a new bucket has none until
 * the daemon counts it).
 */
export function addCalls(timeline: TimeStat[], calls: Pick<Call, 'start' | 'outcome'>[], bucket: number, windowMs: number, now: number): TimeStat[] {
  if (timeline.length === 0) return timeline;
  const out = timeline.slice();
  const first = Date.parse(out[0].time);
  const grow = (upTo: number) => {
    let last = Date.parse(out[out.length - 1].time);
    while (last < upTo) {
      last += bucket;
      out.push({ time: new Date(last).toISOString(), count: 0, errors: 0, p50: 0, p95: 0 });
    }
  };
  grow(bucketStart(now, bucket));
  for (const c of calls) {
    const b = bucketStart(Date.parse(c.start), bucket);
    if (Number.isNaN(b) || b < first) continue;
    grow(b);
    const i = Math.round((b - first) / bucket);
    const old = out[i];
    out[i] = { ...old, count: old.count + 1, errors: old.errors + (c.outcome === 'ok' ? 0 : 1) };
  }
  const from = bucketStart(now - windowMs, bucket);
  let cut = 0;
  while (cut < out.length - 1 && Date.parse(out[cut].time) < from) cut++;
  return cut ? out.slice(cut) : out;
}

/**
 * countTicks are the y ticks of a count axis up to max: whole numbers from
 * 0 in steps of 1, 2 or 5 × 10^k, at most `most` of them, the last at or
 * above max (so a single call reads 0, 1; never 0, 0, 1, 1).
 */
export function countTicks(max: number, most = 5): number[] {
  const top = Math.max(1, Math.ceil(Number.isFinite(max) ? max : 1));
  const want = top / Math.max(1, most - 1);
  let step = 1;
  for (let mag = 1; step < want; mag *= 10) {
    step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= want) ?? 10 * mag;
  }
  const ticks: number[] = [];
  for (let v = 0; v < top + step; v += step) {
    ticks.push(v);
    if (v >= top) break;
  }
  return ticks;
}

/** zeroRange is a y range from 0 with room above max (1 when there is nothing). */
export function zeroRange(max: number | null | undefined): [number, number] {
  return [0, max && max > 0 ? max * 1.15 : 1];
}

/** hasValues says whether any series of aligned data has a value other than null (and 0, with nonZero). */
export function hasValues(data: (number | null)[][], nonZero = false): boolean {
  return data.slice(1).some((s) => s.some((v) => v != null && (!nonZero || v !== 0)));
}

/** stepLabel names a bucket: "30 s", "15 min", "2 h". */
export function stepLabel(ms: number): string {
  return ms >= 3_600_000 ? `${ms / 3_600_000} h` : ms >= 60_000 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}
