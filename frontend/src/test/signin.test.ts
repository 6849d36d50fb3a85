import { afterEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { appContext, createAppContext } from '../lib/app';
import { authLook, reasonText, withAuthEvent } from '../lib/signin';
import ServerDetail from '../pages/ServerDetail.svelte';
import Servers from '../pages/Servers.svelte';
import type { AuthStatus, ServerView } from '../lib/types';
import { FakeEventSource } from './fakes';
import { fakeStream, render, settle, unmountAll } from './mount';

afterEach(unmountAll);

describe('sign-in words', () => {
  it.each([
    ['first use', '', 'First use: Switchboard has not signed in to it yet.'],
    ['refresh refused', '', 'The sign-in expired and the server refused to renew it.'],
    ['scope needed', 'repo:write', 'The server asks for more access than the last sign-in gave (repo:write).'],
    ['token rejected', '', 'The server no longer accepts the last sign-in (it expired or was revoked).'],
    ['signed out', '', 'You signed out.'],
    ['something new', '', 'something new'],
  ])('reason %s reads in plain words', (reason, scope, want) => {
    expect(reasonText(reason, scope)).toBe(want);
    expect(authLook({ state: 'needs sign-in', reason, scope })).toEqual({ label: 'Needs sign-in', tone: 'warn', text: want });
  });

  it('labels the three states', () => {
    expect(authLook({ state: 'signing in' }).label).toBe('Signing in…');
    expect(authLook({ state: 'signed in' })).toMatchObject({ label: 'Signed in', tone: 'ok' });
    expect(authLook({ state: 'needs sign-in' }).text).toBe('Its calls fail until you sign in.');
  });

  it('moves a state with an auth event, keeping the link only while signing in', () => {
    const now = new Date('2026-12-02T05:00:00Z');
    const signing: AuthStatus = { state: 'signing in', reason: 'first use', signInUrl: 'https://auth.example/authorize?x', since: 'then' };
    expect(withAuthEvent(signing, { server: 'n', state: 'signing in', reason: 'first use' }, now)).toEqual(signing);
    expect(withAuthEvent(signing, { server: 'n', state: 'signed in' }, now)).toEqual({ state: 'signed in', since: now.toISOString() });
    expect(withAuthEvent(signing, { server: 'n', state: 'needs sign-in', reason: 'first use', error: 'sign-in timed out after 5m0s' }, now)).toEqual({
      state: 'needs sign-in',
      reason: 'first use',
      error: 'sign-in timed out after 5m0s',
      since: now.toISOString(),
    });
  });
});

const remote = (auth: AuthStatus | undefined): ServerView => ({
  name: 'notion',
  config: { url: 'https://mcp.notion.example/mcp' },
  enabled: true,
  state: 'failing',
  mode: 'shared',
  processes: [],
  restarts: 0,
  recentLogs: [],
  tools: [],
  listed: false,
  auth,
});

// A daemon with one remote server that needs a sign-in; login answers
// with the link (the browser did not open), logout with signed out.
function daemon(first: AuthStatus) {
  let auth: AuthStatus | undefined = first;
  const posts: string[] = [];
  vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
    const ok = (v: unknown) => new Response(JSON.stringify(v), { status: 200 });
    if (init.method === 'POST') {
      posts.push(url);
      if (url === '/api/v1/servers/notion/login') {
        auth = { state: 'signing in', reason: first.reason, signInUrl: 'https://auth.example/authorize?state=s1' };
        return ok({ server: 'notion', signInUrl: auth.signInUrl, browserOpened: false, auth });
      }
      if (url === '/api/v1/servers/notion/logout') {
        auth = { state: 'needs sign-in', reason: 'signed out' };
        return ok({ server: 'notion', revoked: true, auth });
      }
    }
    if (url === '/api/v1/servers') return ok([remote(auth)]);
    if (url === '/api/v1/servers/notion') return ok(remote(auth));
    return ok([]);
  });
  const sources: FakeEventSource[] = [];
  const ctx = createAppContext(fakeStream(sources));
  ctx.stream.start();
  return {
    ctx,
    posts,
    emit: (state: string, extra: Record<string, string> = {}) => {
      auth = { state, ...extra };
      sources[sources.length - 1].emit('auth', { server: 'notion', state, ...extra }, 1);
    },
  };
}

const button = (el: HTMLElement, text: string) => [...el.querySelectorAll<HTMLButtonElement>('button')].find((b) => b.textContent!.trim() === text);

describe('a remote server page', () => {
  it('says why it needs a sign-in, signs in with the link as a fallback, follows the events to signed in, and signs out after a confirmation', async () => {
    const d = daemon({ state: 'needs sign-in', reason: 'first use' });
    await d.ctx.servers.refresh();
    const el = await render(ServerDetail, { props: { name: 'notion' }, context: appContext(d.ctx) });
    const card = () => el.querySelector<HTMLElement>('[data-signin-card]')!;
    expect(card().querySelector('[data-auth]')!.getAttribute('data-auth')).toBe('needs sign-in');
    expect(card().querySelector('[data-auth-label]')!.textContent).toBe('Needs sign-in');
    expect(card().querySelector('[data-auth-why]')!.textContent).toBe('First use: Switchboard has not signed in to it yet.');

    button(card(), 'Sign in')!.click();
    await settle();
    expect(d.posts).toEqual(['/api/v1/servers/notion/login']);
    expect(card().querySelector('[data-auth-label]')!.textContent).toBe('Signing in…');
    const link = card().querySelector<HTMLAnchorElement>('[data-signin-link] a')!;
    expect(link.href).toBe('https://auth.example/authorize?state=s1');
    expect(card().querySelector('[data-signin-link]')!.textContent).toContain('Your browser did not open');

    d.emit('signed in');
    await settle();
    await settle();
    expect(card().querySelector('[data-auth-label]')!.textContent).toBe('Signed in');
    expect(card().querySelector('[data-signin-link]')).toBeNull();
    expect(card().querySelector('[data-auth-note]')!.textContent).toBe('Connected: signed in to notion.');
    expect(button(card(), 'Sign in')).toBeUndefined();

    button(card(), 'Sign out…')!.click();
    await settle();
    expect(d.posts).toHaveLength(1); // nothing before the confirmation
    const dlg = document.querySelector<HTMLElement>('dialog')!;
    expect(dlg.textContent).toContain('Sign out of notion?');
    button(dlg, 'Sign out')!.click();
    await settle();
    expect(d.posts).toEqual(['/api/v1/servers/notion/login', '/api/v1/servers/notion/logout']);
    expect(card().querySelector('[data-auth-label]')!.textContent).toBe('Needs sign-in');
    expect(card().querySelector('[data-auth-why]')!.textContent).toBe('You signed out.');
    expect(card().querySelector('[data-auth-note]')!.textContent).toContain('the server revoked them');
    expect(document.querySelector('dialog')).toBeNull();
  });

  it('shows a sign-in that timed out as its error, with Sign in again', async () => {
    const d = daemon({ state: 'needs sign-in', reason: 'refresh refused' });
    await d.ctx.servers.refresh();
    const el = await render(ServerDetail, { props: { name: 'notion' }, context: appContext(d.ctx) });
    expect(el.querySelector('[data-auth-why]')!.textContent).toBe('The sign-in expired and the server refused to renew it.');
    button(el, 'Sign in')!.click();
    await settle();
    d.emit('needs sign-in', { reason: 'refresh refused', error: 'sign-in to "notion" timed out after 5m0s: the browser did not come back to Switchboard' });
    await settle();
    await settle();
    expect(el.querySelector('[data-auth-error]')!.textContent).toBe('The last sign-in failed: sign-in to "notion" timed out after 5m0s: the browser did not come back to Switchboard');
    expect(el.querySelector('[data-signin-link]')).toBeNull();
    expect(button(el, 'Sign in')).toBeDefined();
  });
});

describe('the servers list', () => {
  it('shows a remote server that needs a sign-in with the why and a Sign in button, and follows it to signed in', async () => {
    const d = daemon({ state: 'needs sign-in', reason: 'scope needed', scope: 'files:write' });
    await d.ctx.servers.refresh();
    const el = await render(Servers, { props: { selected: '' }, context: appContext(d.ctx) });
    const row = () => el.querySelector<HTMLElement>('tr[data-server="notion"]')!;
    expect(row().querySelector('[data-auth-row]')!.textContent).toBe('Needs sign-in · The server asks for more access than the last sign-in gave (files:write).');
    expect(row().querySelector('[data-cause]')).toBeNull();
    row().querySelector<HTMLButtonElement>('button[aria-label="Sign in to notion"]')!.click();
    await settle();
    expect(d.posts).toEqual(['/api/v1/servers/notion/login']);
    expect(row().querySelector('[data-auth-row]')!.textContent).toContain('Signing in…');
    expect(row().querySelector<HTMLAnchorElement>('[data-signin-link] a')!.href).toBe('https://auth.example/authorize?state=s1');
    d.emit('signed in');
    await settle();
    await settle();
    expect(row().querySelector('[data-auth-row]')).toBeNull();
    expect(row().querySelector('[data-auth]')).toBeNull();
    expect(get(d.ctx.servers.servers)[0].auth?.state).toBe('signed in');
  });
});
