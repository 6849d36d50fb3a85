// Mounting pages and components in the unit tests: each one in a fresh
// element of the document, its first fetches settled; unmountAll undoes
// every mount with the document and the stubbed globals (call it from the
// test file's afterEach).

import { vi } from 'vitest';
import { flushSync, mount, unmount, type Component } from 'svelte';
import { appContext, createAppContext } from '../lib/app';
import { EventStream } from '../lib/events';
import { FakeEventSource, flush } from './fakes';

const mounted: ReturnType<typeof mount>[] = [];

/** fakeStream is an event stream whose sources are FakeEventSources, kept in sources. */
export function fakeStream(sources: FakeEventSource[] = []): EventStream {
  return new EventStream({ factory: (u) => (sources.push(new FakeEventSource(u)), sources[sources.length - 1]) });
}

/** settle lets pending fetches answer and the DOM catch up. */
export async function settle(): Promise<void> {
  await flush();
  flushSync();
}

/** render mounts C with options and returns the element it is in. */
export async function render(C: Component<any>, options: { props?: Record<string, unknown>; context?: Map<unknown, unknown> } = {}): Promise<HTMLElement> {
  const target = document.createElement('div');
  document.body.appendChild(target);
  mounted.push(mount(C, { target, ...options }));
  await settle();
  return target;
}

/** renderPage mounts a page with the app's context over stream. */
export function renderPage(page: Component<any>, stream: EventStream = fakeStream()): Promise<HTMLElement> {
  return render(page, { context: appContext(createAppContext(stream)) });
}

export function unmountAll(): void {
  mounted.splice(0).forEach((c) => unmount(c));
  document.body.innerHTML = '';
  vi.unstubAllGlobals();
}
