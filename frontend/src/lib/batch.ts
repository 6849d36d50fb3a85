// Live events arrive one by one, up to hundreds a second; the pages render
// them at most once per animation frame. A FrameBatcher collects what came
// in since the last frame and hands it over in one piece.

export type Schedule = (fn: () => void) => void;

/** nextFrame runs fn before the next paint (a timer where there are no frames). */
export const nextFrame: Schedule = (fn) => {
  if (typeof requestAnimationFrame === 'function' && typeof document !== 'undefined' && document.visibilityState !== 'hidden') {
    requestAnimationFrame(() => fn());
  } else {
    // A hidden page gets no frames: flush on a slow timer, so the backlog stays small.
    setTimeout(fn, 250);
  }
};

/**
 * paced flushes at most every ms (then on the next frame): a table that
 * takes in hundreds of rows a second needs not redraw 60 times a second.
 */
export function paced(ms: number): Schedule {
  return (fn) => setTimeout(() => nextFrame(fn), ms);
}

export class FrameBatcher<T> {
  private items: T[] = [];
  private scheduled = false;
  private stopped = false;
  /** dropped counts items let go because the backlog was over max. */
  dropped = 0;

  /**
   * flush gets every item pushed since the last flush, oldest first. At
   * most max items wait: older ones are let go (a page that shows the
   * newest rows has no use for more than its cap).
   */
  constructor(
    private readonly flush: (items: T[]) => void,
    private readonly max = 5000,
    private readonly schedule: Schedule = nextFrame,
  ) {}

  push(item: T): void {
    if (this.stopped) return;
    this.items.push(item);
    if (this.items.length > this.max) {
      const cut = this.items.length - this.max;
      this.items.splice(0, cut);
      this.dropped += cut;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(() => this.run());
    }
  }

  /** pending is how many items wait for the next flush. */
  get pending(): number {
    return this.items.length;
  }

  /** stop lets go of what waits; nothing is flushed after it. */
  stop(): void {
    this.stopped = true;
    this.items = [];
  }

  private run(): void {
    this.scheduled = false;
    if (this.stopped) return;
    const items = this.items;
    this.items = [];
    if (items.length) this.flush(items);
  }
}
