export function bytes(n: number | undefined): string {
  if (n === undefined || n === null || !Number.isFinite(n)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 100 || i === 0 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}

/** nanos formats a Go time.Duration (nanoseconds). */
export function nanos(ns: number | undefined): string {
  if (ns === undefined || ns === null || !Number.isFinite(ns)) return '—';
  const ms = ns / 1e6;
  if (ns === 0) return '0';
  if (ms < 1) return `${Math.round(ns / 1e3)} µs`;
  if (ms < 1000) return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

export function percent(x: number | undefined, digits = 1): string {
  if (x === undefined || !Number.isFinite(x)) return '—';
  return `${(x * 100).toFixed(digits)} %`;
}

export function cpu(x: number | undefined): string {
  if (x === undefined || !Number.isFinite(x)) return '—';
  return `${x < 10 ? x.toFixed(1) : Math.round(x)} %`;
}

// Made once: toLocaleTimeString with options builds a new formatter each
// call, too slow for a table that renders hundreds of rows a second.
let timeFormat: Intl.DateTimeFormat | undefined;
let dayFormat: Intl.DateTimeFormat | undefined;

export function time(iso: string | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const today = new Date();
  const sameDay = d.getFullYear() === today.getFullYear() && d.getMonth() === today.getMonth() && d.getDate() === today.getDate();
  timeFormat ??= new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  const t = timeFormat.format(d);
  if (sameDay) return t;
  dayFormat ??= new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
  return `${dayFormat.format(d)} ${t}`;
}

export function ago(iso: string | undefined, now = Date.now()): string {
  if (!iso) return 'never';
  const t = Date.parse(iso);
  if (Number.isNaN(t) || t <= 0) return 'never';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

export function rate(perMinute: number): string {
  if (!perMinute) return '0';
  return perMinute < 10 ? perMinute.toFixed(1) : String(Math.round(perMinute));
}

export function json(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') {
    try {
      return JSON.stringify(JSON.parse(v), null, 2);
    } catch {
      return v;
    }
  }
  return JSON.stringify(v, null, 2);
}

let minuteFormat: Intl.DateTimeFormat | undefined;

/**
 * axisTime labels a chart's time axis in the same style as time(): hours
 * and minutes over a day or less, the day beyond.
 */
export function axisTime(ms: number, spanMs: number): string {
  const d = new Date(ms);
  if (spanMs > 2 * 86_400_000) {
    dayFormat ??= new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
    return dayFormat.format(d);
  }
  minuteFormat ??= new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
  return minuteFormat.format(d);
}
