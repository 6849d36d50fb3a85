import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync } from 'svelte';
import Settings from '../pages/Settings.svelte';
import type { Settings as SettingsT } from '../lib/types';
import { renderPage, settle, unmountAll } from './mount';

afterEach(unmountAll);

describe('Settings', () => {
  it('turns tool search on, sending that setting alone, and says what it does', async () => {
    let current: SettingsT = { retention: { maxAge: '168h', maxBytes: 268435456 }, sessionTimeout: '30m', redactValues: true, toolSearch: false };
    const puts: unknown[] = [];
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
      if (url === '/api/v1/settings' && init?.method === 'PUT') {
        const body = JSON.parse(String(init.body));
        puts.push(body);
        current = { ...current, ...body }; // a setting the PUT leaves out keeps its value
        return new Response(JSON.stringify(current), { status: 200 });
      }
      if (url === '/api/v1/settings') return new Response(JSON.stringify(current), { status: 200 });
      if (url === '/api/v1/tokens') return new Response('[]', { status: 200 });
      return new Response('{}', { status: 200 });
    });
    const target = await renderPage(Settings);

    const card = target.querySelector('[data-tool-search]')!;
    expect(card.textContent).toContain('search_tools and call_tool');
    expect(card.textContent).toContain('sessions opened after the change');
    const box = card.querySelector<HTMLInputElement>('input[type=checkbox]')!;
    expect(box.checked).toBe(false);

    box.click();
    await settle();
    // The other settings are not sent back as the page read them: a hand
    // edit of config.json since (retention, say) would be undone.
    expect(puts).toEqual([{ toolSearch: true }]);
    expect(target.querySelector<HTMLInputElement>('[data-tool-search] input[type=checkbox]')!.checked).toBe(true);
  });

  it('saves retention alone, an emptied box as the default (0), and shows the defaults as placeholders', async () => {
    const current: SettingsT = { retention: { maxAge: '168h', maxBytes: 268435456 }, sessionTimeout: '30m', redactValues: true, toolSearch: true };
    const puts: unknown[] = [];
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
      if (url === '/api/v1/settings' && init?.method === 'PUT') {
        puts.push(JSON.parse(String(init.body)));
        return new Response(JSON.stringify(current), { status: 200 });
      }
      if (url === '/api/v1/settings') return new Response(JSON.stringify(current), { status: 200 });
      return new Response(url === '/api/v1/tokens' ? '[]' : '{}', { status: 200 });
    });
    const target = await renderPage(Settings);

    const [days, mb] = [...target.querySelectorAll<HTMLInputElement>('form input.num')];
    expect([days.value, mb.value]).toEqual(['7', '256']);
    // The daemon's defaults: 30 days (720h), 1 GiB.
    expect([days.placeholder, mb.placeholder]).toEqual(['30', '1024']);
    days.value = '';
    days.dispatchEvent(new Event('input', { bubbles: true }));
    mb.value = '100';
    mb.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    target.querySelector<HTMLFormElement>('form')!.requestSubmit();
    await settle();
    expect(puts).toEqual([{ retention: { maxAge: '0s', maxBytes: 104857600 } }]);
  });

  it('leaves the box out for a daemon that does not have the setting', async () => {
    vi.stubGlobal('fetch', async (url: string) => {
      if (url === '/api/v1/settings') return new Response(JSON.stringify({ retention: {}, redactValues: true }), { status: 200 });
      return new Response(url === '/api/v1/tokens' ? '[]' : '{}', { status: 200 });
    });
    const target = await renderPage(Settings);
    expect(target.textContent).toContain('History retention');
    expect(target.querySelector('[data-tool-search]')).toBeNull();
  });

  it("shows each token's scope and profile, and offers no Revoke for Switchboard's own tokens", async () => {
    const toks = [
      { id: 'a', label: 'dashboard', scope: 'admin', created: '2026-11-01T10:00:00Z' },
      { id: 'b', label: 'cli', scope: 'admin', created: '2026-11-01T10:00:00Z' },
      { id: 'c', label: 'cursor', scope: 'client', profile: 'coding', created: '2026-11-02T10:00:00Z' },
      { id: 'd', label: 'vscode', scope: 'client', created: '2026-11-03T10:00:00Z' },
    ];
    vi.stubGlobal('fetch', async (url: string) => new Response(url === '/api/v1/tokens' ? JSON.stringify(toks) : '{}', { status: 200 }));
    const target = await renderPage(Settings);
    const rows = [...target.querySelectorAll('tr[data-token]')].map((tr) => [
      tr.getAttribute('data-token'),
      tr.querySelector('[data-scope]')!.textContent!.trim(),
      tr.querySelector('[data-profile]')!.textContent!.trim(),
      tr.querySelector('button') ? 'Revoke…' : tr.querySelector('[data-guarded]')!.textContent!.trim(),
    ]);
    expect(rows).toEqual([
      ['dashboard', 'admin', '/mcp', 'this dashboard'],
      ['cli', 'admin', '/mcp', 'Switchboard’s own'],
      ['cursor', 'client', 'coding', 'Revoke…'],
      ['vscode', 'client', '/mcp', 'Revoke…'],
    ]);
    expect(target.querySelector('tr[data-token="cli"] [data-guarded]')!.getAttribute('title')).toContain('switchboard tokens revoke cli');
  });

  it('says what the profile a token is bound to is, or that it is gone', async () => {
    const toks = [
      { id: 'c', label: 'cursor', scope: 'client', profile: 'coding', created: '2026-11-02T10:00:00Z' },
      { id: 'z', label: 'zed', scope: 'client', profile: 'removed', created: '2026-11-02T10:00:00Z' },
    ];
    const profiles = [{ name: 'coding', endpoint: '/mcp/p/coding', servers: ['fs', 'git'], toolSearch: true, toolCount: 2, reachableTools: 23 }];
    vi.stubGlobal('fetch', async (url: string) =>
      new Response(url === '/api/v1/tokens' ? JSON.stringify(toks) : url === '/api/v1/profiles' ? JSON.stringify(profiles) : '{}', { status: 200 }),
    );
    const target = await renderPage(Settings);
    const facts = (label: string) => target.querySelector(`tr[data-token="${label}"] [data-profile-facts]`)!.textContent!.trim();
    expect(facts('cursor')).toBe('search · 23 tools behind 2');
    expect(facts('zed')).toBe('not in config.json');
  });
});
