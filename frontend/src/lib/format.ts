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

// One format for every moment the dashboard shows (History, call detail,
// lifecycle, logs, backups, tokens, the charts' legend), in local time:
// the clock ("14:03:05") for today, the day before it otherwise
// ("1 Dec 14:03:05", or "Dec 1 14:03:05" as the locale orders it), with
// the year when it is not this year. Chart axes use the same pieces
// (axisTime). The formatters are made once per locale: building one per
// call is too slow for a table that renders hundreds of rows a second.
const formats = new Map<string, Intl.DateTimeFormat>();
function formatter(locale: string | undefined, key: string, opts: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const k = `${locale ?? ''}|${key}`;
  let f = formats.get(k);
  if (!f) formats.set(k, (f = new Intl.DateTimeFormat(locale, opts)));
  return f;
}
const CLOCK: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit', second: '2-digit' };
const MINUTE: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit' };
const DAY: Intl.DateTimeFormatOptions = { month: 'short', day: 'numeric' };
const DAY_YEAR: Intl.DateTimeFormatOptions = { year: 'numeric', month: 'short', day: 'numeric' };

export interface TimeOptions {
  /** Always put the day first, even today (the call detail). */
  date?: boolean;
  /** What "today" is (tests). */
  now?: number;
  /** The locale (tests); the page's by default. */
  locale?: string;
}

function dayOf(d: Date, now: Date, locale: string | undefined): string {
  const sameYear = d.getFullYear() === now.getFullYear();
  return formatter(locale, sameYear ? 'day' : 'dayYear', sameYear ? DAY : DAY_YEAR).format(d);
}

/** time formats a moment (RFC 3339 text, epoch ms or a Date) in the dashboard's one format. */
export function time(v: string | number | Date | undefined | null, o: TimeOptions = {}): string {
  if (v === undefined || v === null || v === '') return '—';
  const d = v instanceof Date ? v : new Date(v);
  if (Number.isNaN(d.getTime())) return typeof v === 'string' ? v : '—';
  const clock = formatter(o.locale, 'clock', CLOCK).format(d);
  const now = new Date(o.now ?? Date.now());
  const sameDay = d.getFullYear() === now.getFullYear() && d.getMonth() === now.getMonth() && d.getDate() === now.getDate();
  if (sameDay && !o.date) return clock;
  return `${dayOf(d, now, o.locale)} ${clock}`;
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

/**
 * axisTime labels a chart's time axis with the pieces of time(): hours and
 * minutes over two days or less, the day beyond.
 */
export function axisTime(ms: number, spanMs: number, o: Omit<TimeOptions, 'date'> = {}): string {
  const d = new Date(ms);
  if (spanMs > 2 * 86_400_000) return dayOf(d, new Date(o.now ?? Date.now()), o.locale);
  return formatter(o.locale, 'minute', MINUTE).format(d);
}
