import { describe, expect, it } from 'vitest';
import { get } from 'svelte/store';
import { EventStream } from '../lib/events';
import { InFlight, STALE_MS, callKey, progressShare, progressText } from '../lib/inflight';
import { FakeEventSource } from './fakes';

describe('InFlight', () => {
  it('shows a call from its start to its recorded end, in batches', () => {
    const made: FakeEventSource[] = [];
    const stream = new EventStream({ factory: (u) => (made.push(new FakeEventSource(u)), made[made.length - 1]) });
    let frames: (() => void)[] = [];
    const frame = () => {
      const f = frames;
      frames = [];
      f.forEach((fn) => fn());
    };
    const t0 = Date.parse('2026-12-01T10:00:00Z');
    const inflight = new InFlight(stream, () => t0 + 5000, (fn) => frames.push(fn));
    stream.start();
    const es = made[0];
    const start = (name: string, start: string) => ({ start, server: 'alpha', endpoint: '', method: 'tools/call', name, clientLabel: 'cli', clientName: 'x', session: 's' });
    // The daemon's start has nanoseconds, the recorded call microseconds.
    es.emit('call-start', start('alpha__sleep', '2026-12-01T10:00:01.123456789Z'), 1);
    es.emit('call-start', start('alpha__echo', '2026-12-01T10:00:02.5Z'), 2);
    es.emit('call', { id: 9, server: 'alpha', name: 'alpha__echo', start: '2026-12-01T10:00:02.500000Z', outcome: 'ok' }, 3);
    expect(get(inflight.calls)).toEqual([]); // not before the frame
    frame();
    expect(get(inflight.calls).map((c) => c.name)).toEqual(['alpha__sleep']); // echo started and ended in one batch
    es.emit('call', { id: 10, server: 'alpha', name: 'alpha__sleep', start: '2026-12-01T10:00:01.123456Z', outcome: 'ok' }, 4);
    frame();
    expect(get(inflight.calls)).toEqual([]);
  });

  it('lets go of calls whose end was lost, and of everything on reset', () => {
    let now = Date.parse('2026-12-01T10:00:00Z');
    const inflight = new InFlight(undefined, () => now, (fn) => fn());
    const c = { start: new Date(now).toISOString(), server: 'a', endpoint: 'a', method: 'tools/call', name: 'x', clientLabel: '', clientName: '', session: '' };
    inflight.apply([{ start: c }]);
    expect(get(inflight.calls)).toHaveLength(1);
    now += STALE_MS + 1;
    inflight.apply([]);
    expect(get(inflight.calls)).toHaveLength(0);
    inflight.apply([{ start: { ...c, start: new Date(now).toISOString() } }]);
    inflight.clear();
    expect(get(inflight.calls)).toHaveLength(0);
    expect(callKey({ server: 'a', name: 'x', start: '2026-12-01T10:00:00.999999999Z' })).toBe(callKey({ server: 'a', name: 'x', start: '2026-12-01T10:00:00.999999Z' }));
  });

  it('keeps the latest progress of a running call, named as its start', () => {
    const made: FakeEventSource[] = [];
    const stream = new EventStream({ factory: (u) => (made.push(new FakeEventSource(u)), made[made.length - 1]) });
    const inflight = new InFlight(stream, () => Date.parse('2026-12-01T10:00:05Z'), (fn) => fn());
    stream.start();
    const es = made[0];
    const start = '2026-12-01T10:00:01.123456789Z';
    es.emit('call-start', { start, server: 'alpha', endpoint: '', method: 'tools/call', name: 'alpha__sleep', clientLabel: '', clientName: '', session: 's' }, 1);
    // Progress of a call not (or no longer) running is let go.
    es.emit('call-progress', { start, server: 'beta', name: 'alpha__sleep', progress: 1, total: 2 }, 2);
    es.emit('call-progress', { start, server: 'alpha', name: 'alpha__sleep', progress: 300, total: 700, message: 'slept 300 of 700 ms' }, 3);
    expect(get(inflight.calls)[0].progress).toEqual({ progress: 300, total: 700, message: 'slept 300 of 700 ms' });
    es.emit('call-progress', { start, server: 'alpha', name: 'alpha__sleep', progress: 600, total: 700, message: 'slept 600 of 700 ms' }, 4);
    expect(progressText(get(inflight.calls)[0].progress)).toBe('85 % · slept 600 of 700 ms');
    expect(progressShare(get(inflight.calls)[0].progress)).toBeCloseTo(600 / 700);
    es.emit('call', { id: 1, server: 'alpha', name: 'alpha__sleep', start: '2026-12-01T10:00:01.123456Z', outcome: 'ok' }, 5);
    expect(get(inflight.calls)).toEqual([]);
    expect(progressText({ progress: 3 })).toBe('3');
    expect(progressText({ progress: 2.5, message: 'pages' })).toBe('2.5 · pages');
    expect(progressShare({ progress: 3 })).toBeUndefined();
    expect(progressText(undefined)).toBe('');
  });
});
