// Turning samples and calls into uPlot's aligned series.

import type { Call, Sample, TimeStat } from './types';

export const WINDOWS = [
  { key: '15m', label: '15 min', ms: 15 * 60_000, bucket: 30_000 },
  { key: '1h', label: '1 h', ms: 3_600_000, bucket: 60_000 },
  { key: '24h', label: '24 h', ms: 86_400_000, bucket: 15 * 60_000 },
  { key: '168h', label: '7 d', ms: 7 * 86_400_000, bucket: 2 * 3_600_000 },
] as const;

export type Aligned = { names: string[]; data: number[][] };

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
  return { names, data: [times, ...(series as number[][])] };
}

/** bucketCalls counts calls and their p50/p95 latency per bucket. */
export function bucketCalls(calls: Pick<Call, 'start' | 'duration' | 'outcome'>[], since: number, until: number, bucket: number): TimeStat[] {
  const n = Math.max(1, Math.ceil((until - since) / bucket));
  const durs: number[][] = Array.from({ length: n }, () => []);
  const errs = new Array<number>(n).fill(0);
  for (const c of calls) {
    const t = Date.parse(c.start);
    if (t < since || t > until) continue;
    const i = Math.min(n - 1, Math.floor((t - since) / bucket));
    durs[i].push(c.duration);
    if (c.outcome !== 'ok') errs[i]++;
  }
  return durs.map((d, i) => {
    const sorted = d.slice().sort((a, b) => a - b);
    const rank = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] : 0);
    return { time: new Date(since + i * bucket).toISOString(), count: d.length, errors: errs[i], p50: rank(0.5), p95: rank(0.95) };
  });
}
