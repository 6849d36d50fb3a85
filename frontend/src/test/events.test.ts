import { describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { EventStream } from '../lib/events';
import { FakeEventSource, ManualTimers } from './fakes';

function setup(backoff = [100, 200, 400]) {
  const made: FakeEventSource[] = [];
  const timers = new ManualTimers();
  const stream = new EventStream({
    url: '/api/v1/events',
    factory: (url) => {
      const es = new FakeEventSource(url);
      made.push(es);
      return es;
    },
    backoff,
    setTimer: timers.set,
    clearTimer: timers.clear,
  });
  return { stream, made, timers };
}

describe('EventStream', () => {
  it('delivers typed events to their subscribers and tracks the last id', () => {
    const { stream, made } = setup();
    const got: [string, unknown, number][] = [];
    stream.on('call', (d, id) => got.push(['call', d, id]));
    stream.on('state', (d, id) => got.push(['state', d, id]));
    stream.start();
    expect(made).toHaveLength(1);
    expect(made[0].url).toBe('/api/v1/events');
    made[0].open();
    expect(get(stream.state)).toBe('open');
    made[0].emit('call', { id: 9, server: 'a' }, 41);
    made[0].emit('state', { server: 'a', kind: 'ready' }, 42);
    made[0].emit('log', { server: 'a', text: 'x' }, 43); // nobody listens
    expect(got).toEqual([
      ['call', { id: 9, server: 'a' }, 41],
      ['state', { server: 'a', kind: 'ready' }, 42],
    ]);
    expect(stream.lastId).toBe(43);
  });

  it('unsubscribes', () => {
    const { stream, made } = setup();
    let n = 0;
    const off = stream.on('config', () => n++);
    stream.start();
    made[0].emit('config', {}, 1);
    off();
    made[0].emit('config', {}, 2);
    expect(n).toBe(1);
  });

  it('lets the browser retry a dropped connection by itself', () => {
    const { stream, made, timers } = setup();
    stream.start();
    made[0].open();
    made[0].fail(false);
    expect(get(stream.state)).toBe('reconnecting');
    expect(made).toHaveLength(1);
    expect(timers.queue).toHaveLength(0);
    made[0].open();
    expect(get(stream.state)).toBe('open');
  });

  it('reconnects with ?since=<last id> and a growing delay when the browser gives up', () => {
    const { stream, made, timers } = setup([100, 200, 400]);
    stream.start();
    made[0].open();
    made[0].emit('sample', { server: 'a' }, 17);
    made[0].fail(true);
    expect(made[0].closed).toBe(true);
    expect(get(stream.state)).toBe('reconnecting');
    expect(timers.runAll()).toEqual([100]);
    expect(made).toHaveLength(2);
    expect(made[1].url).toBe('/api/v1/events?since=17');

    made[1].fail(true);
    expect(timers.runAll()).toEqual([200]);
    made[2].fail(true);
    expect(timers.runAll()).toEqual([400]);
    made[3].fail(true);
    expect(timers.runAll()).toEqual([400]); // the last delay repeats
    made[4].open();
    made[4].emit('sample', { server: 'a' }, 18);
    made[4].fail(true);
    expect(timers.runAll()).toEqual([100]); // an open connection resets the delay
    expect(made[5].url).toBe('/api/v1/events?since=18');
  });

  it('ignores events of a replaced connection', () => {
    const { stream, made, timers } = setup();
    const got: unknown[] = [];
    stream.on('call', (d) => got.push(d));
    stream.start();
    made[0].fail(true);
    timers.runAll();
    made[0].emit('call', { id: 1 }, 5);
    made[1].emit('call', { id: 2 }, 6);
    expect(got).toEqual([{ id: 2 }]);
  });

  it('passes reset on so that stores refetch, and keeps the stream going', () => {
    const { stream, made } = setup();
    let resets = 0;
    const calls: unknown[] = [];
    stream.on('reset', () => resets++);
    stream.on('call', (d) => calls.push(d));
    stream.start();
    made[0].open();
    made[0].emit('reset', {}, 500);
    made[0].emit('call', { id: 3 }, 501);
    expect(resets).toBe(1);
    expect(calls).toEqual([{ id: 3 }]);
    expect(stream.lastId).toBe(501);
  });

  it('skips a message with invalid JSON without breaking others', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { stream, made } = setup();
    const got: unknown[] = [];
    stream.on('call', (d) => got.push(d));
    stream.on('call', () => {
      throw new Error('a broken handler');
    });
    stream.start();
    made[0].emit('call', '{not json', 1);
    made[0].emit('call', { id: 1 }, 2);
    expect(got).toEqual([{ id: 1 }]);
    expect(warn).toHaveBeenCalledTimes(1); // the bad JSON
    expect(error).toHaveBeenCalledTimes(1); // the broken handler, for the one good message
    warn.mockRestore();
    error.mockRestore();
  });

  it('stops: no reconnect after stop', () => {
    const { stream, made, timers } = setup();
    stream.start();
    made[0].fail(true);
    expect(timers.queue).toHaveLength(1);
    stream.stop();
    expect(timers.queue).toHaveLength(0);
    expect(get(stream.state)).toBe('closed');
    stream.start();
    expect(made).toHaveLength(2);
  });
});
