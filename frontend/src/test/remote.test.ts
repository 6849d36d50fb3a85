import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync } from 'svelte';
import AddServer from '../pages/AddServer.svelte';
import ServerDetail from '../pages/ServerDetail.svelte';
import Servers from '../pages/Servers.svelte';
import { parseConfig, withTool } from '../lib/actions';
import { errorField, headersError, isLoopbackHost, remoteFormErrors, remoteRequest, remoteSummary, urlError, type RemoteForm } from '../lib/remote';
import { confinementText, networkText, sandboxVerdict } from '../lib/sandbox';
import type { Sandbox, ServerConfig, ServerView } from '../lib/types';
import { render, settle, unmountAll } from './mount';
import { appContext, createAppContext } from '../lib/app';
import { fakeStream } from './mount';

afterEach(unmountAll);

const form = (f: Partial<RemoteForm> = {}): RemoteForm => ({ name: 'linear', url: 'https://mcp.linear.app/mcp', transport: 'auto', headers: [], secretHeaders: [], enabled: true, ...f });

describe('remote server checks (as app/config/remote.go)', () => {
  it.each([
    ['https://mcp.example.com/mcp', ''],
    ['http://127.0.0.1:9/mcp', ''],
    ['http://localhost:3000/mcp', ''],
    ['http://[::1]:8080/mcp', ''],
    ['http://127.5.0.1/mcp', ''],
    ['', /URL is required/],
    ['mcp.example.com', /not a URL/],
    ['ftp://example.com/mcp', /Use https/],
    ['http://example.com/mcp', /http:\/\/ is only for this machine/],
    ['http://192.168.1.2/mcp', /only for this machine/],
    ['https://user:pw@example.com/mcp', /user name or password/],
    ['https://example.com/mcp#x', /#fragment/],
  ])('url %s', (url, want) => {
    if (want === '') expect(urlError(url)).toBe('');
    else expect(urlError(url)).toMatch(want);
  });

  it('knows loopback hosts', () => {
    for (const h of ['localhost', 'a.localhost', '127.0.0.1', '[::1]', '::1']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['example.com', '10.0.0.1', 'localhost.example.com', '128.0.0.1']) expect(isLoopbackHost(h)).toBe(false);
  });

  it.each([
    [[{ name: 'X-Team', value: 'a' }], ''],
    [[{ name: '', value: '' }], ''],
    [[{ name: '', value: 'v' }], /value but no name/],
    [[{ name: 'Bad Name', value: 'v' }], /not a header name/],
    [[{ name: 'Content-Type', value: 'v' }], /set by the MCP transport/],
    [[{ name: 'mcp-session-id', value: 'v' }], /set by the MCP transport/],
    [[{ name: 'X-A', value: '1' }, { name: 'x-a', value: '2' }], /given twice/],
    [[{ name: 'X-A', value: 'a\nb' }], /line breaks/],
  ])('headers %j', (rows, want) => {
    if (want === '') expect(headersError(rows, 'header')).toBe('');
    else expect(headersError(rows, 'header')).toMatch(want);
  });

  it('wants a value for each secret header, and no header both plain and secret', () => {
    expect(remoteFormErrors(form({ secretHeaders: [{ name: 'Authorization', value: '' }] })).secretHeaders).toMatch(/no value/);
    expect(remoteFormErrors(form({ headers: [{ name: 'authorization', value: 'x' }], secretHeaders: [{ name: 'Authorization', value: 'y' }] })).secretHeaders).toMatch(/both a header and a secret header/);
    expect(remoteFormErrors(form())).toEqual({});
  });

  it('builds the body of POST /api/v1/remotes, leaving out what is default or blank', () => {
    expect(remoteRequest(form())).toEqual({ name: 'linear', url: 'https://mcp.linear.app/mcp' });
    expect(
      remoteRequest(form({ name: ' gh ', url: ' https://x/mcp ', transport: 'sse', enabled: false, headers: [{ name: 'X-Team', value: 'a' }, { name: '', value: '' }], secretHeaders: [{ name: 'Authorization', value: 'Bearer s3cret' }] })),
    ).toEqual({ name: 'gh', url: 'https://x/mcp', transport: 'sse', enabled: false, headers: { 'X-Team': 'a' }, secretHeaders: { Authorization: 'Bearer s3cret' } });
  });

  it.each([
    ['invalid server: servers.r.url: invalid URL "http://x/": http:// is only for this machine', 'url'],
    ['invalid server: servers.r.url: http://127.0.0.1:7777/mcp points at Switchboard\'s own listener', 'url'],
    ['invalid server: servers.r.transport: invalid value "x"', 'transport'],
    ['invalid server: servers.r.headers: header "Host" is set by the MCP transport itself', 'headers'],
    ['invalid server: secretHeaders.Authorization: a header value cannot contain line breaks', 'secretHeaders'],
    ['server "r" already exists; change it with PUT /api/v1/servers/r', 'name'],
    ['invalid request body: "name" is missing', 'name'],
    ['cannot add "r": it has secret headers (Authorization) and this daemon has no secret store', undefined],
    ['the daemon did not answer', undefined],
  ])('maps the API error %j to the field %s', (msg, want) => {
    expect(errorField(msg)).toBe(want);
  });

  it('says a remote server is remote and how it connects', () => {
    expect(remoteSummary({ url: 'https://x' }, [])).toBe('remote · auto');
    expect(remoteSummary({ url: 'https://x', transport: 'sse' }, [])).toBe('remote · sse');
    expect(remoteSummary({ url: 'https://x' }, [{ transport: 'streamable-http' }])).toBe('remote · streamable-http');
  });
});

describe('the config editor takes remote entries', () => {
  const remote: ServerConfig = { url: 'https://mcp.linear.app/mcp', transport: 'auto', secretHeaders: { Authorization: 'Authorization' }, enabled: false, timeout: '30s', alias: 'lin', disabledTools: ['a'] };
  it('accepts a remote entry with the settings every server has', () => {
    expect(parseConfig(JSON.stringify(remote))).toEqual({ config: remote });
    expect(parseConfig(JSON.stringify(withTool(remote, 'b', false))).config?.disabledTools).toEqual(['a', 'b']);
  });
  it.each([
    ['{"url":""}', /"url" must be the remote server/],
    ['{"url":"http://example.com/mcp"}', /"url": http:\/\/ is only for this machine/],
    ['{"url":"https://x/mcp","command":"npx"}', /takes no "command"/],
    ['{"url":"https://x/mcp","args":[]}', /takes no "args"/],
    ['{"url":"https://x/mcp","transport":"websocket"}', /"transport" must be "auto", "streamable-http", "sse"/],
    ['{"url":"https://x/mcp","headers":{"A":1}}', /"headers" must be an object of string/],
    ['{"url":"https://x/mcp","enabled":"no"}', /"enabled" must be true or false/],
    ['{}', /"command" is required.*or "url"/],
  ])('rejects %s', (text, want) => {
    expect(parseConfig(text).error).toMatch(want);
  });
});

const sb = (s: Partial<Sandbox> = {}): Sandbox => ({ confined: true, network: false, enforced: true, mechanism: 'landlock ABI 7', read: ['/usr', '/home/u/.switchboard/servers/fs'], write: ['/home/u/.switchboard/data/fs'], ...s });

describe('sandbox verdict', () => {
  it.each([
    [sb(), 'ok', 'Confined and in force (landlock ABI 7)'],
    [sb({ enforced: false, mechanism: undefined, reason: 'not started yet' }), 'idle', 'Confined when it starts (not started yet)'],
    [sb({ enforced: false, mechanism: undefined, reason: 'not confined: this kernel has no Landlock (SWITCHBOARD_NO_LANDLOCK)' }), 'warn', 'Not in force: this kernel has no Landlock (SWITCHBOARD_NO_LANDLOCK)'],
    [sb({ enforced: false, mechanism: undefined }), 'warn', 'Not in force: the launcher did not report confinement'],
    [{ confined: false, network: false, enforced: false, reason: 'not confined: "sandbox": false in config.json' }, 'idle', 'Not confined: "sandbox": false in config.json'],
  ])('%j', (s, tone, title) => {
    expect(sandboxVerdict(s)).toMatchObject({ tone, title });
  });
  it('names what the kernel cannot enforce', () => {
    expect(sandboxVerdict(sb({ missing: ['tcp'] })).missing).toBe('Not enforced by this kernel: tcp.');
  });
  it('says what the network policy lets through', () => {
    expect(networkText(sb())).toMatch(/^No network/);
    expect(networkText(sb({ network: true }))).toBe('Network allowed.');
    expect(networkText(sb({ network: true, denyPorts: [7777] }))).toBe("Network allowed, except TCP port 7777 (Switchboard's own).");
  });
  it('reads a process report', () => {
    expect(confinementText(undefined)).toBe('unconfined');
    expect(confinementText({ enforced: true, mechanism: 'landlock ABI 7' })).toBe('confined · landlock ABI 7');
    expect(confinementText({ enforced: true, mechanism: 'landlock ABI 3', missing: ['tcp'] })).toBe('confined · landlock ABI 3 · without tcp');
    expect(confinementText({ enforced: false, reason: 'not confined: no Landlock' })).toBe('not confined: no Landlock');
  });
});

const view = (v: Partial<ServerView>): ServerView => ({ name: 'x', config: { command: 'x' }, enabled: true, state: 'stopped', mode: 'single', processes: [], restarts: 0, recentLogs: [], tools: [], listed: false, ...v });

/** serveViews answers the dashboard's GETs with these servers and records the writes. */
function serveViews(views: ServerView[], writes: { method: string; url: string; body: unknown }[] = [], answer?: (url: string, body: any) => Response | undefined) {
  vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
    const method = init?.method ?? 'GET';
    if (method !== 'GET') {
      const body = init?.body ? JSON.parse(String(init.body)) : undefined;
      writes.push({ method, url, body });
      const r = answer?.(url, body);
      if (r) return r;
    }
    if (url === '/api/v1/servers') return new Response(JSON.stringify(views), { status: 200 });
    const one = views.find((v) => url === `/api/v1/servers/${v.name}`);
    if (one) return new Response(JSON.stringify(one), { status: 200 });
    if (url.includes('/logs') || url.startsWith('/api/v1/stats') || url.startsWith('/api/v1/held-tools') || url.startsWith('/api/v1/events')) return new Response('[]', { status: 200 });
    return new Response('{}', { status: 200 });
  });
}

const linear = view({
  name: 'linear',
  config: { url: 'https://mcp.linear.app/mcp', transport: 'streamable-http', headers: { 'X-Team': 'eng' }, secretHeaders: { Authorization: 'Authorization' } },
  state: 'running',
  processes: [{ pid: 0, state: 'ready', started: new Date().toISOString(), inFlight: 0, leased: false, transport: 'streamable-http', serverInfo: 'linear/1.0' }],
  sandbox: { confined: false, network: false, enforced: false, reason: 'a remote server: it runs on its own host, nothing runs here to confine' },
});

/** renderWith mounts C over an app context whose servers are loaded, as App.svelte does. */
async function renderWith(C: any, props: Record<string, unknown>) {
  const ctx = createAppContext(fakeStream());
  await ctx.servers.refresh();
  return render(C, { props, context: appContext(ctx) });
}

describe('a remote server in the dashboard', () => {
  it('its page shows the URL, the transport and the header names, never a secret value or an empty command', async () => {
    serveViews([linear]);
    const el = await renderWith(ServerDetail, { name: 'linear' });
    await settle();
    const card = el.querySelector('[data-remote]')!;
    expect(card.querySelector('[data-url]')!.textContent).toBe('https://mcp.linear.app/mcp');
    expect(card.querySelector('[data-transport-config]')!.textContent).toBe('streamable-http');
    expect(card.querySelector('[data-headers]')!.textContent).toBe('X-Team');
    expect(card.querySelector('[data-secret-headers]')!.textContent).toContain('Authorization');
    expect(card.textContent).not.toContain('eng'); // a plain header's value may be a token too
    expect(el.textContent).not.toContain('Command');
    expect(el.querySelector('[data-sandbox]')).toBeNull();
    expect(el.querySelector('[data-transport]')!.textContent).toBe('streamable-http');
    expect(el.textContent).not.toContain('PID');
  });

  it('its Config tab saves an edit of a remote entry (the editor no longer wants a command)', async () => {
    const writes: { method: string; url: string; body: unknown }[] = [];
    serveViews([linear], writes, (url, body) => (url === '/api/v1/servers/linear' ? new Response(JSON.stringify({ ...linear, config: body }), { status: 200 }) : undefined));
    const el = await renderWith(ServerDetail, { name: 'linear' });
    el.querySelector<HTMLButtonElement>('#tab-config')!.click();
    await settle();
    const ta = el.querySelector<HTMLTextAreaElement>('#cfg')!;
    ta.value = JSON.stringify({ ...linear.config, timeout: '45s', disabledTools: ['delete_issue'] });
    ta.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    expect(el.querySelector('#cfg-err')).toBeNull();
    el.querySelector<HTMLButtonElement>('form button[type=submit]')!.click();
    await settle();
    expect(writes).toEqual([{ method: 'PUT', url: '/api/v1/servers/linear', body: { ...linear.config, timeout: '45s', disabledTools: ['delete_issue'] } }]);
    expect(el.textContent).toContain('Saved');
  });

  it('the servers list says "remote · transport" instead of a process count', async () => {
    serveViews([linear, view({ name: 'fs', processes: [{ pid: 42, state: 'ready', started: new Date().toISOString(), inFlight: 0, leased: false }] })]);
    const el = await renderWith(Servers, {});
    await settle();
    expect(el.querySelector('[data-server="linear"] [data-remote]')!.textContent).toBe('remote · streamable-http');
    expect(el.querySelector('[data-server="fs"] [data-remote]')).toBeNull();
  });
});

describe('the sandbox on the server page', () => {
  const fs = (s: Sandbox, confinement?: ServerView['processes'][0]['confinement']) =>
    view({ name: 'fs', state: 'running', sandbox: s, processes: [{ pid: 42, state: 'ready', started: new Date().toISOString(), inFlight: 0, leased: false, confinement }] });

  it('shows the policy in force: reads, writes, network and denied ports, and the launcher report per process', async () => {
    serveViews([fs(sb({ network: true, denyPorts: [7777] }), { enforced: true, mechanism: 'landlock ABI 7' })]);
    const el = await renderWith(ServerDetail, { name: 'fs' });
    const card = el.querySelector('[data-sandbox]')!;
    expect(card.getAttribute('data-sandbox')).toBe('ok');
    expect(card.querySelector('[data-verdict]')!.textContent).toBe('Confined and in force (landlock ABI 7)');
    expect([...card.querySelectorAll('[data-read] li')].map((l) => l.textContent)).toEqual(['/usr', '/home/u/.switchboard/servers/fs']);
    expect([...card.querySelectorAll('[data-write] li')].map((l) => l.textContent)).toEqual(['/home/u/.switchboard/data/fs']);
    expect(card.querySelector('[data-network]')!.textContent).toContain('except TCP port 7777');
    expect(el.querySelector('[data-confinement]')!.textContent).toBe('confined · landlock ABI 7');
  });

  it('says prominently when the policy is not in force, and why', async () => {
    const reason = 'not confined: this kernel has no Landlock';
    serveViews([fs(sb({ enforced: false, mechanism: undefined, reason }), { enforced: false, reason: 'this kernel has no Landlock' })]);
    const el = await renderWith(ServerDetail, { name: 'fs' });
    const card = el.querySelector('[data-sandbox]')!;
    expect(card.getAttribute('data-sandbox')).toBe('warn');
    const verdict = card.querySelector('[data-verdict]')!;
    expect(verdict.getAttribute('role')).toBe('alert');
    expect(verdict.textContent).toBe('Not in force: this kernel has no Landlock');
    expect(el.querySelector('[data-confinement]')!.textContent).toBe('not confined: this kernel has no Landlock');
    expect(el.querySelector('[data-confinement]')!.classList.contains('bad')).toBe(true);
  });
});

describe('Add server: Remote (URL)', () => {
  async function openRemote(writes: { method: string; url: string; body: unknown }[], answer?: (url: string, body: any) => Response | undefined) {
    serveViews([], writes, answer);
    const el = await renderWith(AddServer, { onclose: () => {} });
    const radio = document.querySelector<HTMLInputElement>('input[value=remote]')!;
    radio.click();
    flushSync();
    return el;
  }
  const type = (sel: string, value: string) => {
    const i = document.querySelector<HTMLInputElement>(sel)!;
    i.value = value;
    i.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
  };
  const submit = async () => {
    document.querySelector<HTMLButtonElement>('button[form=add-server]')!.click();
    await settle();
  };

  it('checks the URL before sending anything', async () => {
    const writes: { method: string; url: string; body: unknown }[] = [];
    await openRemote(writes);
    type('input[placeholder=everything]', 'remote1');
    type('input[name=url]', 'http://example.com/mcp');
    await submit();
    expect(writes).toEqual([]);
    expect(document.querySelector('#add-url-err')!.textContent).toMatch(/only for this machine/);
  });

  it('sends name, URL, transport, headers and secret headers to POST /api/v1/remotes, the secret typed in a password box', async () => {
    const writes: { method: string; url: string; body: unknown }[] = [];
    await openRemote(writes, (url, body) => (url === '/api/v1/remotes' ? new Response(JSON.stringify(view({ name: body.name, config: { url: body.url } })), { status: 201 }) : undefined));
    type('input[placeholder=everything]', 'gh');
    type('input[name=url]', 'http://127.0.0.1:9/mcp');
    const sel = document.querySelector<HTMLSelectElement>('select[name=transport]')!;
    sel.value = 'sse';
    sel.dispatchEvent(new Event('change', { bubbles: true }));
    flushSync();
    const [addHeader, addSecret] = [...document.querySelectorAll<HTMLButtonElement>('fieldset button')].filter((b) => b.textContent!.startsWith('Add'));
    addHeader.click();
    addSecret.click();
    flushSync();
    type('input[aria-label="Headers: name 1"]', 'X-Team');
    type('input[aria-label="Headers: value 1"]', 'eng');
    type('input[aria-label="Secret headers: name 1"]', 'Authorization');
    type('input[aria-label="Secret headers: value 1"]', 'Bearer s3cret');
    expect(document.querySelector<HTMLInputElement>('input[aria-label="Secret headers: value 1"]')!.type).toBe('password');
    document.querySelector<HTMLInputElement>('input[type=checkbox]')!.click();
    flushSync();
    await submit();
    expect(writes).toEqual([
      { method: 'POST', url: '/api/v1/remotes', body: { name: 'gh', url: 'http://127.0.0.1:9/mcp', transport: 'sse', enabled: false, headers: { 'X-Team': 'eng' }, secretHeaders: { Authorization: 'Bearer s3cret' } } },
    ]);
  });

  it('shows the API error next to the field it names', async () => {
    const writes: { method: string; url: string; body: unknown }[] = [];
    const msg = "invalid server: servers.me.url: http://127.0.0.1:7777/mcp points at Switchboard's own listener (127.0.0.1:7777): a server cannot be its own remote";
    await openRemote(writes, () => new Response(JSON.stringify({ error: msg }), { status: 400 }));
    type('input[placeholder=everything]', 'me');
    type('input[name=url]', 'http://127.0.0.1:7777/mcp');
    await submit();
    expect(writes).toHaveLength(1);
    expect(document.querySelector('#add-url-err')!.textContent).toBe(msg);
    expect(document.querySelector('.error-note, [role=alert]')?.textContent ?? '').not.toContain('cannot be its own remote');
  });
});

describe('tool tiers on the server page', () => {
  it('the Tools tab shows each tool tier, destructive ones marked', async () => {
    serveViews([view({ name: 'fs', state: 'running', listed: true,
      tools: [{ name: 'read_file', tier: 'read' }, { name: 'write_file', tier: 'write' }, { name: 'delete_file', tier: 'destructive' }] })]);
    const el = await renderWith(ServerDetail, { name: 'fs' });
    el.querySelector<HTMLButtonElement>('#tab-tools')!.click();
    await settle();
    const tier = (tool: string) => el.querySelector(`[data-tool="${tool}"] [data-tier]`)!;
    expect(tier('read_file').textContent).toBe('read');
    expect(tier('write_file').textContent).toBe('write');
    expect(tier('delete_file').textContent).toBe('destructive');
    expect(tier('delete_file').classList.contains('warn')).toBe(true);
    expect(tier('read_file').classList.contains('warn')).toBe(false);
  });
});
