import { describe, expect, it } from 'vitest';
import { LIFECYCLE_LIMIT, loadLifecycle, mergeLifecycle, severity } from '../lib/lifecycle';
import type { StateEvent } from '../lib/types';
import { fakeApi } from './fakes';

const ev = (time: string, kind: string, pid?: number): StateEvent => ({ server: 'alpha', time, kind, pid });

describe('lifecycle', () => {
  it('loads the recorded events of one server', async () => {
    const api = fakeApi({ '/api/v1/lifecycle?server=a%2Fb&limit=200': [ev('2026-11-30T10:00:00Z', 'config')] });
    expect(await loadLifecycle(api.get, 'a/b')).toHaveLength(1);
  });

  it('puts live events after the recorded ones, newest first, without the ones recorded already', () => {
    const recorded = [ev('2026-11-30T10:00:00.000001Z', 'starting', 7), ev('2026-11-30T10:00:01.250001Z', 'ready', 7)];
    const live = [
      ev('2026-11-30T10:00:05.000000001Z', 'crashed', 7),
      ev('2026-11-30T10:00:01.250001999Z', 'ready', 7), // the recorded one, from the feed
      ev('2026-11-30T09:59:00Z', 'stopped', 3), // before the recording's newest
    ];
    const merged = mergeLifecycle(recorded, live);
    expect(merged.map((e) => e.kind)).toEqual(['crashed', 'ready', 'starting']);
  });

  it('keeps at most the limit, newest first', () => {
    const recorded = Array.from({ length: LIFECYCLE_LIMIT + 5 }, (_, i) => ev(new Date(Date.UTC(2026, 10, 30, 10, 0, i)).toISOString(), 'state'));
    const merged = mergeLifecycle(recorded, []);
    expect(merged).toHaveLength(LIFECYCLE_LIMIT);
    expect(merged[0].time).toBe(recorded[recorded.length - 1].time);
  });

  it('shows crashes as bad, back-off as a warning, the rest plainly', () => {
    expect(['crashed', 'failing', 'backoff', 'config', 'ready'].map(severity)).toEqual(['bad', 'bad', 'warn', '', '']);
  });
});

describe('failed servers', () => {
  it('shows a server down after a failure as failed, not stopped', async () => {
    const { serverState, stateLook } = await import('../lib/state');
    expect(serverState({ state: 'failing', lastError: 'x' })).toBe('failed');
    expect(serverState({ state: 'stopped', lastError: 'exit status 1', processes: [] })).toBe('failed');
    expect(serverState({ state: 'stopped', processes: [] })).toBe('stopped');
    expect(serverState({ state: 'running', lastError: 'once', processes: [{}] })).toBe('running');
    const failed = stateLook('failed');
    const stopped = stateLook('stopped');
    expect([failed.label, failed.tone, failed.shape]).toEqual(['Failed', 'bad', 'cross']);
    expect(failed.tone).not.toBe(stopped.tone);
    expect(failed.shape).not.toBe(stopped.shape);
  });

  it('leads with the cause', async () => {
    const { failureCause } = await import('../lib/state');
    expect(failureCause('server "broken" failed to start: exec: "does-not-exist-mcp": executable file not found in $PATH')).toBe('Command not found: does-not-exist-mcp');
    expect(failureCause('server "broken" failed to start: command not found: does-not-exist-mcp (searched PATH: /usr/bin:/bin)')).toBe('Command not found: does-not-exist-mcp');
    expect(failureCause('fork/exec /opt/x/bin/srv: no such file or directory')).toBe('Command not found: /opt/x/bin/srv');
    expect(failureCause('server "a" failed to start: handshake: EOF')).toBe('handshake: EOF');
    expect(failureCause('exit status 1')).toBe('exit status 1');
    expect(failureCause(undefined)).toBe('');
  });

  it('says what is under way until a server is first listed, never a "0" that means "not known yet"', async () => {
    const { toolCount } = await import('../lib/state');
    const cfg: { disabledTools?: string[] } = {};
    expect(toolCount({ state: 'starting', listed: false, tools: [], config: cfg })).toBe('starting…');
    expect(toolCount({ state: 'running', listed: false, tools: [], config: cfg })).toBe('listing…');
    expect(toolCount({ state: 'stopped', listed: false, tools: [], config: cfg })).toBe('—');
    expect(toolCount({ state: 'running', listed: true, tools: [{}, {}, {}], config: cfg })).toBe('3');
    expect(toolCount({ state: 'running', listed: true, tools: [{}, {}], config: { disabledTools: ['a'] } })).toBe('1/2');
    expect(toolCount({ state: 'running', listed: true, tools: [], config: cfg })).toBe('0'); // listed: it has none
  });
});

