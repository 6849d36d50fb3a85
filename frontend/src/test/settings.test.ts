import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import Settings from '../pages/Settings.svelte';
import { appContext, createAppContext } from '../lib/app';
import { EventStream } from '../lib/events';
import type { Settings as SettingsT } from '../lib/types';
import { FakeEventSource, flush } from './fakes';

let cmp: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (cmp) unmount(cmp);
  cmp = null;
  document.body.innerHTML = '';
  vi.unstubAllGlobals();
});

describe('Settings', () => {
  it('turns tool search on with the settings it read, and says what it does', async () => {
    let current: SettingsT = { retention: { maxAge: '168h', maxBytes: 268435456 }, sessionTimeout: '30m', redactValues: true, toolSearch: false };
    const puts: unknown[] = [];
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
      if (url === '/api/v1/settings' && init?.method === 'PUT') {
        const body = JSON.parse(String(init.body));
        puts.push(body);
        current = body;
        return new Response(JSON.stringify(current), { status: 200 });
      }
      if (url === '/api/v1/settings') return new Response(JSON.stringify(current), { status: 200 });
      if (url === '/api/v1/tokens') return new Response('[]', { status: 200 });
      return new Response('{}', { status: 200 });
    });
    const stream = new EventStream({ factory: (u) => new FakeEventSource(u) });
    const target = document.createElement('div');
    document.body.appendChild(target);
    cmp = mount(Settings, { target, context: appContext(createAppContext(stream)) });
    await flush();
    flushSync();

    const card = target.querySelector('[data-tool-search]')!;
    expect(card.textContent).toContain('search_tools and call_tool');
    expect(card.textContent).toContain('sessions opened after the change');
    const box = card.querySelector<HTMLInputElement>('input[type=checkbox]')!;
    expect(box.checked).toBe(false);

    box.click();
    await flush();
    flushSync();
    expect(puts).toEqual([{ retention: { maxAge: '168h', maxBytes: 268435456 }, sessionTimeout: '30m', redactValues: true, toolSearch: true }]);
    expect(target.querySelector<HTMLInputElement>('[data-tool-search] input[type=checkbox]')!.checked).toBe(true);
  });

  it('leaves the box out for a daemon that does not have the setting', async () => {
    vi.stubGlobal('fetch', async (url: string) => {
      if (url === '/api/v1/settings') return new Response(JSON.stringify({ retention: {}, redactValues: true }), { status: 200 });
      return new Response(url === '/api/v1/tokens' ? '[]' : '{}', { status: 200 });
    });
    const stream = new EventStream({ factory: (u) => new FakeEventSource(u) });
    const target = document.createElement('div');
    document.body.appendChild(target);
    cmp = mount(Settings, { target, context: appContext(createAppContext(stream)) });
    await flush();
    flushSync();
    expect(target.textContent).toContain('History retention');
    expect(target.querySelector('[data-tool-search]')).toBeNull();
  });
});
