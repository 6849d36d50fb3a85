import { describe, expect, it } from 'vitest';
import { alignSamples, bucketCalls } from '../lib/usage';
import { parseConfig, withTool } from '../lib/actions';
import { parseRoute, href } from '../lib/router';
import { bytes, nanos } from '../lib/format';

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

  it('counts calls, errors and nearest-rank latency per bucket', () => {
    const since = Date.parse('2026-11-30T10:00:00Z');
    const at = (s: number, d: number, outcome = 'ok') => ({ start: new Date(since + s * 1000).toISOString(), duration: d, outcome });
    const b = bucketCalls([at(1, 10), at(2, 20), at(3, 30, 'timeout'), at(61, 5), at(-5, 99), at(200, 99)], since, since + 120_000, 60_000);
    expect(b).toEqual([
      { time: '2026-11-30T10:00:00.000Z', count: 3, errors: 1, p50: 20, p95: 30 },
      { time: '2026-11-30T10:01:00.000Z', count: 1, errors: 0, p50: 5, p95: 5 },
    ]);
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
