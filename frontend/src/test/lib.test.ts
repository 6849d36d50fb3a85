import { describe, expect, it } from 'vitest';
import { addCalls, alignSamples, bucketStart, countTicks, hasValues, zeroRange } from '../lib/usage';
import { parseConfig, withTool } from '../lib/actions';
import { parseRoute, href } from '../lib/router';
import { axisTime, bytes, nanos, time } from '../lib/format';

describe('usage series', () => {
  it('aligns samples of several servers on one time axis, with gaps as null', () => {
    const a = alignSamples(
      [
        { time: '2026-11-30T10:00:00Z', server: 'b', cpuPercent: 1, rssBytes: 10, processes: 1 },
        { time: '2026-11-30T10:00:02Z', server: 'a', cpuPercent: 2, rssBytes: 20, processes: 1 },
        { time: '2026-11-30T10:00:02Z', server: 'b', cpuPercent: 3, rssBytes: 30, processes: 1 },
      ],
      (s) => s.cpuPercent,
    );
    const t0 = Date.parse('2026-11-30T10:00:00Z') / 1000;
    expect(a.names).toEqual(['a', 'b']);
    expect(a.data).toEqual([[t0, t0 + 2], [null, 2], [1, 3]]);
  });

  it('puts calls in buckets on clock boundaries, adding buckets as time goes and letting go of old ones', () => {
    const min = 60_000;
    const t = (m: number, s = 0) => Date.parse('2026-11-30T10:00:00Z') + m * min + s * 1000;
    expect(bucketStart(t(3, 59), min)).toBe(t(3));
    expect(bucketStart(t(2, 0), 15 * min)).toBe(t(0));
    const iso = (ms: number) => new Date(ms).toISOString();
    const tl = [0, 1, 2].map((m) => ({ time: iso(t(m)), count: m === 1 ? 4 : 0, errors: 0, p50: m === 1 ? 7 : 0, p95: m === 1 ? 9 : 0 }));
    const call = (ms: number, outcome = 'ok') => ({ start: iso(ms), outcome });
    // Now is 10:04:30 in a 4-minute window from 10:00:30: buckets 10:00 … 10:04, as the daemon makes them.
    let got = addCalls(tl, [call(t(1, 30)), call(t(4, 10), 'timeout'), call(t(4, 20)), call(t(-3))], min, 4 * min, t(4, 30));
    expect(got.map((b) => b.time)).toEqual([t(0), t(1), t(2), t(3), t(4)].map(iso));
    expect(got.map((b) => b.count)).toEqual([0, 5, 0, 0, 2]);
    expect(got.map((b) => b.errors)).toEqual([0, 0, 0, 0, 1]);
    expect(got[1].p95).toBe(9);
    // A minute later, with no calls: 10:00 has left the window, 10:05 came.
    got = addCalls(got, [], min, 4 * min, t(5, 30));
    expect(got.map((b) => b.time)).toEqual([t(1), t(2), t(3), t(4), t(5)].map(iso)); // the daemon's latency stays until it counts again
    expect(tl[1].count).toBe(4); // not changed in place
    expect(addCalls([], [call(t(1))], min, 4 * min, t(4))).toEqual([]);
  });

  it('ticks counts with whole numbers from 0, never repeating a label', () => {
    expect(countTicks(0)).toEqual([0, 1]); // nothing: 0 and 1, not 0–100
    expect(countTicks(1)).toEqual([0, 1]); // one call in 15 min: not 1 1 1 0 0
    expect(countTicks(0.4)).toEqual([0, 1]);
    expect(countTicks(3)).toEqual([0, 1, 2, 3]);
    expect(countTicks(7)).toEqual([0, 2, 4, 6, 8]);
    expect(countTicks(100)).toEqual([0, 50, 100]);
    expect(countTicks(530)).toEqual([0, 200, 400, 600]);
    for (const max of [1, 2, 5, 9, 13, 99, 1234, 98765]) {
      const ticks = countTicks(max);
      expect(ticks.every(Number.isInteger)).toBe(true);
      expect(ticks.length).toBeLessThanOrEqual(5);
      expect(ticks[ticks.length - 1]).toBeGreaterThanOrEqual(max);
      expect(new Set(ticks).size).toBe(ticks.length);
    }
  });

  it('starts the memory axis at 0 and knows an empty chart', () => {
    expect(zeroRange(600 * 2 ** 20)[0]).toBe(0);
    expect(zeroRange(100)[1]).toBeGreaterThan(100);
    expect(zeroRange(null)).toEqual([0, 1]);
    expect(hasValues([[1, 2], [null, null]])).toBe(false);
    expect(hasValues([[1, 2], [0, 0]])).toBe(true);
    expect(hasValues([[1, 2], [0, 0]], true)).toBe(false);
    expect(hasValues([[1], [3]], true)).toBe(true);
  });
});

describe('server config edits', () => {
  it('disables and enables one tool, keeping the rest of the config', () => {
    const cfg = { command: 'npx', args: ['x'], disabledTools: ['b'], custom: 1 };
    const off = withTool(cfg, 'a', false);
    expect(off).toEqual({ command: 'npx', args: ['x'], disabledTools: ['a', 'b'], custom: 1 });
    expect(withTool(withTool(off, 'a', true), 'b', true)).toEqual({ command: 'npx', args: ['x'], custom: 1 });
    expect(cfg.disabledTools).toEqual(['b']); // not changed in place
  });

  it.each([
    ['{', /^Not valid JSON/],
    ['[]', /must be a JSON object/],
    ['{}', /"command" is required/],
    ['{"command":"x","args":"a b"}', /"args" must be a list/],
    ['{"command":"x","env":{"A":1}}', /"env" must be an object of string/],
    ['{"command":"x","enabled":"no"}', /"enabled" must be true or false/],
    ['{"command":"x","disabledTools":[1]}', /"disabledTools" must be a list/],
  ])('rejects %s', (text, want) => {
    expect(parseConfig(text).error).toMatch(want);
  });

  it('accepts a valid config with unknown keys', () => {
    expect(parseConfig('{"command":"x","args":["-y"],"future":true}').config).toEqual({ command: 'x', args: ['-y'], future: true });
  });
});

describe('routes and formats', () => {
  it('parses hash routes', () => {
    expect(parseRoute('')).toEqual({ page: 'servers', params: [] });
    expect(parseRoute('#/catalog/io.github.x%2Fy')).toEqual({ page: 'catalog', params: ['io.github.x/y'] });
    expect(parseRoute('#/nope')).toEqual({ page: 'servers', params: [] });
    expect(href('catalog', 'io.github.x/y')).toBe('#/catalog/io.github.x%2Fy');
  });
  it('formats bytes and Go durations', () => {
    expect(bytes(0)).toBe('0 B');
    expect(bytes(1536)).toBe('1.5 KiB');
    expect(bytes(200 * 1048576)).toBe('200 MiB');
    expect(nanos(0)).toBe('0');
    expect(nanos(250_000)).toBe('250 µs');
    expect(nanos(12_400_000)).toBe('12 ms');
    expect(nanos(2_500_000_000)).toBe('2.50 s');
  });
});

describe('importAsPlan', () => {
  it('lists the servers the import adds, then the client file diff; nothing to add and no file change is not a change', async () => {
    const { importAsPlan, parseDiff } = await import('../lib/diff');
    const plan = importAsPlan({
      client: 'claude-desktop', path: '/h/c.json', hash: 'h1', replace: true, changed: true,
      diff: '--- a\n+++ b\n@@ -1,1 +1,1 @@\n-x\n+y\n',
      servers: [{ entry: 'my fs', name: 'my-fs', action: 'add', renamed: true }, { entry: 'git', name: 'git', action: 'exists' }],
      skipped: [{ entry: 'remote', reason: 'a remote URL' }],
    });
    expect(plan.hash).toBe('h1');
    expect(plan.changed).toBe(true);
    const lines = parseDiff(plan.diff);
    expect(lines.filter((l) => l.kind === 'add').map((l) => l.text)).toEqual(['server "my-fs" (from "my fs")', 'y']);
    expect(plan.diff).toContain('already in Switchboard');
    expect(plan.diff).toContain('a remote URL');
    // With the client's entries: what each added server runs, env names without values.
    const shown = importAsPlan(
      { client: 'c', path: 'p', hash: 'h', replace: false, changed: false, diff: '', servers: [{ entry: 'github', name: 'github', action: 'add' }], skipped: [] },
      [{ Name: 'github', Command: 'npx', Args: ['-y', '@modelcontextprotocol/server-github'], Env: { GITHUB_TOKEN: 'ghp_secret' } }],
    );
    expect(shown.diff).toContain('+server "github": npx -y @modelcontextprotocol/server-github (env: GITHUB_TOKEN)');
    expect(shown.diff).not.toContain('ghp_secret');
    const none = importAsPlan({ client: 'c', path: 'p', hash: 'h', replace: false, changed: false, diff: '', servers: [{ entry: 'git', name: 'git', action: 'exists' }], skipped: [] });
    expect(none.changed).toBe(false);
  });
});

describe('usableLanguage', () => {
  it('keeps a language Intl knows and turns the C locale into English', async () => {
    const { usableLanguage } = await import('../lib/locale');
    expect(usableLanguage('de-DE')).toBe('de-DE');
    expect(usableLanguage('C')).toBe('en-US');
    expect(usableLanguage(undefined)).toBe('en-US');
  });
});

describe('first run', () => {
  it('offers the installed clients with servers of their own, most first', async () => {
    const { importable } = await import('../lib/diff');
    const c = (id: string, installed: boolean, names: string[]) => ({ id, name: id, installed, servers: names.map((Name) => ({ Name })) });
    const got = importable([c('vscode', true, ['switchboard']), c('cursor', true, ['a']), c('claude', true, ['a', 'b']), c('zed', false, ['x'])]);
    expect(got.map((x) => x.id)).toEqual(['claude', 'cursor']);
  });
});

describe('one time format', () => {
  // Local times, so that the test holds in any time zone.
  const now = new Date(2026, 11, 1, 16, 0, 0).getTime();
  const at = (mo: number, d: number, h: number, mi: number, se: number, y = 2026) => new Date(y, mo, d, h, mi, se);
  const o = { now, locale: 'en-GB' };

  it('shows the clock today, the day before it otherwise, the year when not this one', () => {
    expect(time(at(11, 1, 14, 3, 5), o)).toBe('14:03:05');
    expect(time(at(11, 1, 14, 3, 5).toISOString(), o)).toBe('14:03:05'); // RFC 3339 from the daemon, shown in local time
    expect(time(at(11, 1, 14, 3, 5).getTime(), o)).toBe('14:03:05');
    expect(time(at(10, 30, 23, 59, 59), o)).toBe('30 Nov 23:59:59');
    expect(time(at(11, 31, 8, 0, 0, 2025), o)).toBe('31 Dec 2025 08:00:00');
    expect(time(at(11, 1, 14, 3, 5), { ...o, date: true })).toBe('1 Dec 14:03:05'); // the call detail: always the day
    expect(time(at(11, 1, 14, 3, 5), { ...o, locale: 'en-US' })).toBe('02:03:05 PM'); // the locale orders the pieces
    expect(time(undefined)).toBe('—');
    expect(time('')).toBe('—');
    expect(time('not a time')).toBe('not a time');
  });

  it('labels chart axes with the same pieces', () => {
    const t = at(11, 1, 14, 3, 5).getTime();
    expect(axisTime(t, 3_600_000, o)).toBe('14:03');
    expect(axisTime(t, 7 * 86_400_000, o)).toBe('1 Dec');
    expect(time(t, o).startsWith(axisTime(t, 3_600_000, o))).toBe(true);
  });
});

describe('small things that mislead', () => {
  it('shows no usage for a server without processes (stopped, failed)', async () => {
    const { liveUsage } = await import('../lib/state');
    const usage = { cpuPercent: 0.4, rssBytes: 61_236_838 };
    expect(liveUsage({ processes: [], usage })).toBeUndefined();
    expect(liveUsage({ usage })).toBeUndefined();
    expect(liveUsage({ processes: [{}], usage })).toBe(usage);
  });

  it('says the registry is offline in one line, with the number of entries shown', async () => {
    const { registryLine } = await import('../lib/install');
    const warning = 'registry unreachable: dial tcp: lookup registry.modelcontextprotocol.io: no such host; no cached registry results, showing the built-in catalog only';
    expect(registryLine({ entries: [1, 2, 3], source: 'embedded', warning })).toBe('registry offline: showing the 3 built-in servers');
    expect(registryLine({ entries: [1], source: 'cache', warning })).toBe('registry offline: showing 1 server from its cached answers');
    expect(registryLine({ entries: [1], source: 'registry' })).toBe('');
    expect(registryLine(null)).toBe('');
  });
});
