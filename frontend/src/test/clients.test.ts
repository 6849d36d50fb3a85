import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync } from 'svelte';
import Clients from '../pages/Clients.svelte';
import type { ClientPlan, ClientView, ProfileView } from '../lib/types';
import { renderPage, settle, unmountAll } from './mount';

const revoked: ClientView = {
  id: 'cursor',
  name: 'Cursor',
  path: '/home/u/.cursor/mcp.json',
  installed: true,
  connected: false,
  tokenRevoked: true,
  servers: [{ Name: 'switchboard', Command: '', Args: null, Env: null, Cwd: '', URL: 'http://127.0.0.1:7391/mcp', Headers: { Authorization: '••••••' } }],
  warning: 'its Switchboard entry "switchboard" carries a token that was revoked (or is unknown to this Switchboard): every request it makes is refused; connect it again to give it a new token (clients connect cursor)',
};

afterEach(unmountAll);

describe('Clients', () => {
  it('shows a client whose token is revoked as needing a reconnect, and reconnects it with a connect plan', async () => {
    const posts: { url: string; body: unknown }[] = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      if (init.method === 'POST') {
        posts.push({ url, body: JSON.parse(String(init.body)) });
        const plan: ClientPlan = { client: 'cursor', path: revoked.path!, hash: 'h1', diff: '', changed: true };
        return new Response(JSON.stringify(plan), { status: 200 });
      }
      if (url === '/api/v1/clients') return new Response(JSON.stringify([revoked]), { status: 200 });
      return new Response('[]', { status: 200 });
    });
    const target = await renderPage(Clients);

    const card = target.querySelector('[data-client="cursor"]')!;
    const pill = card.querySelector('.pill')!;
    expect(pill.textContent).toContain('Token revoked');
    expect(pill.classList.contains('warn')).toBe(true);
    expect(card.textContent).not.toContain('Connected');
    expect(card.querySelector('.warning')!.textContent).toContain('carries a token that was revoked');
    const buttons = [...card.querySelectorAll('.actions button')].map((b) => b.textContent!.trim());
    expect(buttons).toContain('Reconnect…');
    expect(buttons).not.toContain('Disconnect and revoke…');
    const reconnect = [...card.querySelectorAll<HTMLButtonElement>('.actions button')].find((b) => b.textContent!.trim() === 'Reconnect…')!;
    expect(reconnect.classList.contains('primary')).toBe(true);

    reconnect.click();
    await settle();
    expect(posts).toEqual([{ url: '/api/v1/clients/cursor/plan', body: { action: 'connect' } }]);
  });

  it('reconnects a client whose token is revoked to the profile its entry names', async () => {
    // The API names the profile of the revoked client's entry (/mcp/p/coding).
    const onProfile: ClientView = { ...revoked, profile: 'coding', warning: revoked.warning!.replace('(clients connect cursor)', '(clients connect cursor --profile coding)') };
    onProfile.servers = [{ ...revoked.servers[0], URL: 'http://127.0.0.1:7391/mcp/p/coding' }];
    const coding: ProfileView = { name: 'coding', endpoint: '/mcp/p/coding', servers: ['fs'], toolCount: 3 };
    const posts: { url: string; body: unknown }[] = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      if (init.method === 'POST') {
        posts.push({ url, body: JSON.parse(String(init.body)) });
        const plan: ClientPlan = { client: 'cursor', path: revoked.path!, hash: 'h1', diff: '', changed: true };
        return new Response(JSON.stringify(plan), { status: 200 });
      }
      if (url === '/api/v1/clients') return new Response(JSON.stringify([onProfile]), { status: 200 });
      if (url === '/api/v1/profiles') return new Response(JSON.stringify([coding]), { status: 200 });
      return new Response('[]', { status: 200 });
    });
    const target = await renderPage(Clients);

    const card = target.querySelector('[data-client="cursor"]')!;
    expect(card.querySelector<HTMLSelectElement>('select.profile-choice')!.value).toBe('coding');
    const reconnect = [...card.querySelectorAll<HTMLButtonElement>('.actions button')].find((b) => b.textContent!.trim() === 'Reconnect…')!;
    reconnect.click();
    await settle();
    expect(posts).toEqual([{ url: '/api/v1/clients/cursor/plan', body: { action: 'connect', profile: 'coding' } }]);
  });

  it("names the tools a client's profile has that its servers do not offer", async () => {
    const connected: ClientView = { id: 'cursor', name: 'Cursor', path: '/home/u/.cursor/mcp.json', installed: true, connected: true, profile: 'coding', tools: 1, servers: [] };
    const coding: ProfileView = { name: 'coding', endpoint: '/mcp/p/coding', servers: ['fs'], tools: { fs: ['read_file', 'typo_tool'] }, toolCount: 1, missingTools: { fs: ['typo_tool'] } };
    const plain: ProfileView = { name: 'plain', endpoint: '/mcp/p/plain', servers: ['fs'], toolCount: 5 };
    vi.stubGlobal('fetch', async (url: string) => {
      if (url === '/api/v1/clients') return new Response(JSON.stringify([connected]), { status: 200 });
      if (url === '/api/v1/profiles') return new Response(JSON.stringify([coding, plain]), { status: 200 });
      return new Response('[]', { status: 200 });
    });
    const target = await renderPage(Clients);

    const card = target.querySelector('[data-client="cursor"]')!;
    expect(card.querySelector('.missing-tools')!.textContent).toContain('server fs offers no tool typo_tool');
    // Another profile chosen: its tools are all there, no note.
    const select = card.querySelector<HTMLSelectElement>('select.profile-choice')!;
    select.value = 'plain';
    select.dispatchEvent(new Event('change', { bubbles: true }));
    flushSync();
    expect(card.querySelector('.missing-tools')).toBeNull();
  });

  it("warns of the client's tool limit in the Connect dialog, before the write, and offers a profile or tool search there", async () => {
    const cursor: ClientView = { id: 'cursor', name: 'Cursor', path: '/home/u/.cursor/mcp.json', installed: true, connected: false, toolLimit: 40, servers: [] };
    const coding: ProfileView = { name: 'coding', endpoint: '/mcp/p/coding', servers: ['fs'], toolCount: 12 };
    const research: ProfileView = { name: 'research', endpoint: '/mcp/p/research', servers: ['fs'], toolSearch: true, toolCount: 2 };
    let search = false;
    const calls: { method: string; url: string; body: any }[] = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      const body = init.body ? JSON.parse(String(init.body)) : undefined;
      if (init.method && init.method !== 'GET') calls.push({ method: init.method, url, body });
      if (url === '/api/v1/settings' && init.method === 'PUT') {
        search = body.toolSearch;
        return new Response('{}', { status: 200 });
      }
      if (url.endsWith('/plan')) {
        const tools = body.profile === 'coding' ? 12 : search ? 2 : 56;
        const plan: ClientPlan = { client: 'cursor', path: cursor.path!, hash: 'h', diff: '+x', changed: true, tools, toolLimit: 40,
          toolWarning: tools > 40 ? 'Cursor would see 56 tools on /mcp, more than the 40 it takes' : undefined };
        return new Response(JSON.stringify(plan), { status: 200 });
      }
      if (url === '/api/v1/clients') return new Response(JSON.stringify([cursor]), { status: 200 });
      if (url === '/api/v1/profiles') return new Response(JSON.stringify([coding, research]), { status: 200 });
      return new Response('[]', { status: 200 });
    });
    const target = await renderPage(Clients);
    const connectBtn = () => [...target.querySelectorAll<HTMLButtonElement>('[data-client="cursor"] .actions button')].find((b) => b.textContent!.trim() === 'Connect…')!;
    connectBtn().click();
    await settle();
    const warn = () => document.querySelector('dialog [data-tool-limit]');
    expect(warn()!.textContent).toContain('Cursor would see 56 tools on /mcp, more than the 40 it takes');
    const options = [...warn()!.querySelectorAll('option')].map((o) => o.textContent);
    expect(options).toEqual(['All servers (/mcp) · 56 tools', 'coding · 12 tools', 'research · search · 2 tools']);

    // A profile picked in the dialog: planned again for it, the warning gone.
    const sel = warn()!.querySelector<HTMLSelectElement>('select')!;
    sel.value = 'coding';
    sel.dispatchEvent(new Event('change', { bubbles: true }));
    await settle();
    expect(calls.at(-1)).toEqual({ method: 'POST', url: '/api/v1/clients/cursor/plan', body: { action: 'connect', profile: 'coding' } });
    expect(warn()).toBeNull();
    expect(document.querySelector('dialog [data-tool-limit-ok]')!.textContent).toBe('Cursor will see 12 tools; it takes 40.');
    expect(target.querySelector<HTMLSelectElement>('[data-client="cursor"] select.profile-choice')!.value).toBe('coding');

    // Back to /mcp, then tool search turned on from the dialog.
    (document.querySelector('dialog footer button, dialog .footer button') as HTMLButtonElement | null)?.click();
    const card = target.querySelector<HTMLSelectElement>('[data-client="cursor"] select.profile-choice')!;
    card.value = '';
    card.dispatchEvent(new Event('change', { bubbles: true }));
    connectBtn().click();
    await settle();
    [...warn()!.querySelectorAll('button')].find((b) => b.textContent === 'Turn on tool search on /mcp')!.click();
    await settle();
    expect(calls.filter((c) => c.method === 'PUT')).toEqual([{ method: 'PUT', url: '/api/v1/settings', body: { toolSearch: true } }]);
    expect(warn()).toBeNull();
    expect(document.querySelector('dialog [data-tool-limit-ok]')!.textContent).toBe('Cursor will see 2 tools; it takes 40.');
  });
});

describe('Clients: caveats and offered links', () => {
  it("shows Gemini CLI's untrusted-folder caveat on its card", async () => {
    const gemini: ClientView = {
      id: 'gemini-cli', name: 'Gemini CLI', path: '/home/u/.gemini/settings.json', installed: true, connected: true,
      servers: [{ Name: 'switchboard', Command: '', Args: null, Env: null, Cwd: '', URL: 'http://127.0.0.1:7391/mcp', Headers: { Authorization: '••••••' } }],
      caveat: 'Gemini CLI lists Switchboard as "Disabled" in folders it does not trust',
    };
    vi.stubGlobal('fetch', async (url: string) =>
      new Response(url === '/api/v1/clients' ? JSON.stringify([gemini]) : '[]', { status: 200 }));
    const target = await renderPage(Clients);
    const card = target.querySelector('[data-client="gemini-cli"]')!;
    expect(card.querySelector('.pill')!.textContent).toContain('Connected');
    expect(card.querySelector('[data-caveat]')!.textContent).toContain('"Disabled" in folders it does not trust');
  });

  it('offers Cherry Studio its install link and shows it as offered, never connected', async () => {
    const cherry: ClientView = { id: 'cherry-studio', name: 'Cherry Studio', path: '/home/u/.config/CherryStudio', installed: true, connected: false, servers: [], offer: true };
    let offered = false;
    const posts: { url: string; body: unknown }[] = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      if (init?.method === 'POST') {
        posts.push({ url, body: JSON.parse(String(init.body)) });
        offered = true;
        return new Response(JSON.stringify({ client: 'cherry-studio', link: 'cherrystudio://mcp/install?servers=e30%3D', entry: '{"mcpServers": {}}',
          note: 'offered, confirm in Cherry Studio: the app asks whether to add the server "switchboard"', opened: true }), { status: 200 });
      }
      if (url === '/api/v1/clients') return new Response(JSON.stringify([{ ...cherry, offered }]), { status: 200 });
      return new Response('[]', { status: 200 });
    });
    const target = await renderPage(Clients);
    let card = target.querySelector('[data-client="cherry-studio"]')!;
    expect(card.textContent).toContain('connecting offers it an install link');
    const buttons = [...card.querySelectorAll<HTMLButtonElement>('.actions button')];
    expect(buttons.map((b) => b.textContent!.trim())).toEqual(['Offer install link…']);
    buttons[0].click();
    await settle();
    expect(posts).toEqual([{ url: '/api/v1/clients/cherry-studio/offer', body: { open: true } }]);
    expect(document.body.querySelector('.offer-status')!.textContent).toContain('offered, confirm in Cherry Studio');
    expect(document.body.querySelector('.offer-opened')!.textContent).toContain('Cherry Studio asks you now');
    expect(document.body.querySelector<HTMLAnchorElement>('.offer-link')!.getAttribute('href')).toBe('cherrystudio://mcp/install?servers=e30%3D');
    await settle();
    card = target.querySelector('[data-client="cherry-studio"]')!;
    expect(card.querySelector('.pill')!.textContent).toContain('Offered, confirm in Cherry Studio');
    expect(card.textContent).not.toContain('● Connected');
    flushSync();
  });
});
