import { describe, expect, it } from 'vitest';
import { FrameBatcher } from '../lib/batch';

function frames() {
  let queue: (() => void)[] = [];
  return {
    schedule: (fn: () => void) => queue.push(fn),
    get waiting() {
      return queue.length;
    },
    run() {
      const q = queue;
      queue = [];
      q.forEach((fn) => fn());
    },
  };
}

describe('FrameBatcher', () => {
  it('hands over everything pushed between two frames in one flush, oldest first', () => {
    const f = frames();
    const flushed: number[][] = [];
    const b = new FrameBatcher<number>((items) => flushed.push(items), 100, f.schedule);
    for (let i = 0; i < 300; i++) {
      b.push(i);
      if (i === 149) f.run();
    }
    expect(f.waiting).toBe(1); // one frame asked for, however many items
    f.run();
    expect(flushed).toHaveLength(2);
    expect(flushed[0]).toHaveLength(100); // at most max wait: the oldest 50 were let go
    expect(flushed[0][0]).toBe(50);
    expect(flushed[0][99]).toBe(149);
    expect(flushed[1]).toEqual(Array.from({ length: 100 }, (_, i) => 200 + i));
    expect(b.dropped).toBe(100); // 50 of each 150
    f.run();
    expect(flushed).toHaveLength(2); // no empty flushes
  });

  it('flushes nothing after stop', () => {
    const f = frames();
    const flushed: number[][] = [];
    const b = new FrameBatcher<number>((items) => flushed.push(items), 10, f.schedule);
    b.push(1);
    b.stop();
    f.run();
    b.push(2);
    expect(f.waiting).toBe(0);
    expect(flushed).toEqual([]);
  });
});
