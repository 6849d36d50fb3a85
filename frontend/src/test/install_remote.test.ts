import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import { appContext, createAppContext } from '../lib/app';
import { installableRemote, remoteFieldsOf } from '../lib/install';
import InstallDialog from '../components/InstallDialog.svelte';
import type { CatalogEntry, ServerView } from '../lib/types';
import { FakeEventSource, flush } from './fakes';
import { fakeStream } from './mount';

// An entry with only a hosted endpoint: a URL variable, a secret header
// (an API key), a plain one with a fixed value, an optional one.
const entry: CatalogEntry = {
  name: 'io.example/notes',
  title: 'Notes',
  description: 'Hosted notes',
  version: '2.0.0',
  shortName: 'notes',
  kind: 'remote',
  remotes: [
    { type: 'websocket', url: 'wss://nope.example' },
    {
      type: 'streamable-http',
      url: 'https://{tenant}.notes.example/mcp',
      variables: { tenant: { isRequired: true, description: 'Your workspace' } },
      headers: [
        { name: 'X-Api-Key', isRequired: true, isSecret: true, description: 'Your API key' },
        { name: 'X-Client', value: 'switchboard' },
        { name: 'X-Region', description: 'Region', choices: ['eu', 'us'] },
      ],
    },
  ],
};

describe('remote inputs', () => {
  it('takes the first remote Switchboard connects to, and asks for its URL variables and the headers without a fixed value', () => {
    const r = installableRemote(entry)!;
    expect(r.type).toBe('streamable-http');
    const fields = remoteFieldsOf(r);
    expect(fields.map((f) => [f.key, f.kind, f.required, f.secret])).toEqual([
      ['tenant', 'var', true, false],
      ['X-Api-Key', 'header', true, true],
      ['X-Region', 'header', false, false],
    ]);
    expect(installableRemote({ ...entry, remotes: [{ type: 'websocket', url: 'wss://x' }] })).toBeUndefined();
  });
});

describe('InstallDialog for a remote', () => {
  let cmp: ReturnType<typeof mount> | null = null;
  afterEach(() => {
    if (cmp) unmount(cmp);
    cmp = null;
    document.body.innerHTML = '';
  });

  it('asks for the secret header as a password, installs it as a remote, never shows the secret back, and offers the sign-in the server asks for right there', async () => {
    const sources: FakeEventSource[] = [];
    const ctx = createAppContext(fakeStream(sources));
    ctx.stream.start();
    const posts: { url: string; body: any }[] = [];
    const fetchFn = (async (url: string, init: RequestInit) => {
      posts.push({ url, body: JSON.parse(String(init.body)) });
      return new Response(JSON.stringify({ id: 'r1', remote: true }), { status: 202 });
    }) as typeof fetch;
    let done = '';
    cmp = mount(InstallDialog, {
      target: document.body,
      props: { entry, stream: ctx.stream, onclose: () => {}, ondone: (s: string) => (done = s), fetchFn },
      context: appContext(ctx),
    });
    flushSync();
    const input = (id: string) => document.getElementById(id) as HTMLInputElement;
    expect(input('inst-tenant').type).toBe('text');
    expect(input('inst-X-Api-Key').type).toBe('password');
    expect(input('inst-X-Api-Key').autocomplete).toBe('new-password');
    expect(document.getElementById('inst-X-Client')).toBeNull(); // fixed: not asked
    expect(document.querySelector('[data-remote-url]')!.textContent).toContain('https://{tenant}.notes.example/mcp');
    const secret = 'sk-never-shown-back';
    for (const [id, v] of [['inst-tenant', 'acme'], ['inst-X-Api-Key', secret]]) {
      input(id).value = v;
      input(id).dispatchEvent(new Event('input', { bubbles: true }));
    }
    flushSync();
    (document.querySelector('button[type=submit]') as HTMLButtonElement).click();
    await flush();
    flushSync();
    expect(posts).toEqual([{ url: '/api/v1/installs', body: { entry: 'io.example/notes', server: 'notes', values: { tenant: 'acme', 'X-Api-Key': secret }, remote: true } }]);
    expect([...document.querySelectorAll('ol.phases li')].map((li) => li.firstChild!.nextSibling!.textContent!.trim())).toEqual(['Resolve', 'Configure', 'Connect']);

    const es = sources[sources.length - 1];
    es.emit('install', { id: 'r1', server: 'notes', phase: 'configure', line: 'storing 1 secret headers and adding notes to config.json' }, 1);
    es.emit('install', { id: 'r1', server: 'notes', phase: 'verify', done: true, notice: 'it needs a sign-in (needs sign-in: first use): run `switchboard auth login notes`' }, 2);
    flushSync();
    expect(done).toBe('notes');
    expect(document.querySelector('[data-install-notice]')!.textContent).toBe('It needs a sign-in (first use).');
    expect(document.querySelector('[data-install-signin]')).toBeNull(); // not until the view says so

    // The server's view (refetched after the install) asks for a sign-in.
    const view: ServerView = { name: 'notes', config: { url: 'https://acme.notes.example/mcp', secretHeaders: { 'X-Api-Key': 'X-Api-Key' } }, enabled: true, state: 'failing', mode: 'shared', processes: [], restarts: 0, recentLogs: [], auth: { state: 'needs sign-in', reason: 'first use' } };
    ctx.servers.upsert(view);
    flushSync();
    const here = document.querySelector('[data-install-signin]')!;
    expect(here.querySelector('[data-auth-why]')!.textContent).toBe('First use: Switchboard has not signed in to it yet.');
    expect([...here.querySelectorAll('button')].map((b) => b.textContent!.trim())).toContain('Sign in');
    expect(document.querySelector('[data-install-notice]')!.textContent).toBe('It needs a sign-in (first use): sign in below.');
    expect(document.body.innerHTML).not.toContain(secret);

    // Signed in (the auth event): the dialog says so where it offered it.
    es.emit('auth', { server: 'notes', state: 'signed in' }, 3);
    flushSync();
    expect(document.querySelector('[data-install-signin] [data-auth-label]')!.textContent).toBe('Signed in');
    expect(document.querySelector('[data-install-signin] button')!.textContent!.trim()).toBe('Sign out…');
  });
});
