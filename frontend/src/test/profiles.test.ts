import { afterEach, describe, expect, it } from 'vitest';
import { flushSync } from 'svelte';
import ProfilesCard from '../components/ProfilesCard.svelte';
import { draftErrors, draftOf, profileFacts, profileNamed, requestOf } from '../lib/profiles';
import type { ProfileView, ServerView } from '../lib/types';
import { render, settle, unmountAll } from './mount';

afterEach(unmountAll);

const coding: ProfileView = { name: 'coding', endpoint: '/mcp/p/coding', servers: ['fs', 'git'], toolSearch: true, toolCount: 2, reachableTools: 23, clients: ['cursor'] };
const docs: ProfileView = { name: 'docs', endpoint: '/mcp/p/docs', servers: ['fs'], maxTier: 'read', toolCount: 12, tools: { fs: ['read_file'] } };

describe('profileFacts', () => {
  it('says a profile the same way wherever it is named', () => {
    expect(profileFacts(coding)).toBe('coding · search · 23 tools behind 2');
    expect(profileFacts(coding, false)).toBe('search · 23 tools behind 2');
    expect(profileFacts(docs)).toBe('docs · read-only · 12 tools');
    expect(profileFacts({ ...docs, maxTier: 'write', toolCount: 1 })).toBe('docs · no destructive tools · 1 tool');
    // Search mode from a daemon that does not count what is behind: the two it lists.
    expect(profileFacts({ ...coding, reachableTools: undefined })).toBe('coding · search · 2 tools');
    // Tools not counted yet (the gateway has not served it): its servers.
    expect(profileFacts({ name: 'new', endpoint: '/mcp/p/new', servers: ['fs'], missing: ['gone'] })).toBe('new · 2 servers');
    expect(profileNamed([coding, docs], 'docs')).toBe('docs · read-only · 12 tools');
    expect(profileNamed([coding], 'gone')).toBe('gone');
  });
});

describe('profile drafts', () => {
  it('turns a profile into a draft and back into the request the daemon takes', () => {
    const d = draftOf({ ...docs, missing: ['old'] });
    expect(d).toEqual({ name: 'docs', servers: ['fs', 'old'], limits: { fs: ['read_file'] }, toolSearch: false, maxTier: 'read', askFirst: false });
    expect(draftOf({ ...docs, askBeforeDestructive: true }).askFirst).toBe(true);
    expect(requestOf(d, false)).toEqual({ servers: ['fs', 'old'], tools: { fs: ['read_file'] }, maxTier: 'read' });
    // A limit of a server no longer chosen is left out.
    expect(requestOf({ ...d, servers: ['old'], toolSearch: true }, true)).toEqual({ name: 'docs', servers: ['old'], toolSearch: true, maxTier: 'read' });
  });

  it('names what is wrong with a draft by field', () => {
    const empty = draftOf();
    expect(draftErrors(empty, true, [])).toEqual({ name: 'A profile needs a name, like "coding".', servers: 'Pick at least one server.' });
    expect(draftErrors({ ...empty, name: 'a b', servers: ['fs'] }, true, []).name).toMatch(/letters, digits/);
    expect(draftErrors({ ...empty, name: 'coding', servers: ['fs'] }, true, ['coding']).name).toBe('A profile named "coding" exists already; edit it, or pick another name.');
    expect(draftErrors({ ...empty, name: 'x', servers: ['fs'], limits: { fs: [] } }, true, [])).toEqual({ 'tools.fs': 'Pick at least one tool of fs, or let it offer all its tools.' });
    // Editing: the name is the profile's own.
    expect(draftErrors(draftOf(coding), false, ['coding'])).toEqual({});
  });
});

const servers = [
  { name: 'fs', listed: true, tools: [{ name: 'read_file' }, { name: 'write_file' }, { name: 'list_directory' }] },
  { name: 'git', listed: true, tools: [{ name: 'git_log' }] },
] as ServerView[];

function fakeFetch(answer: (method: string, url: string, body: unknown) => [number, unknown]) {
  const sent: { method: string; url: string; body: unknown }[] = [];
  const fetchFn = async (url: string, init: RequestInit) => {
    const body = init.body ? JSON.parse(String(init.body)) : undefined;
    sent.push({ method: init.method!, url, body });
    const [status, out] = answer(init.method!, url, body);
    return new Response(status === 204 ? null : JSON.stringify(out), { status });
  };
  return { sent, fetchFn: fetchFn as unknown as typeof fetch };
}

const click = (el: Element | null | undefined) => {
  (el as HTMLElement).click();
  flushSync();
};
const check = (el: Element | null | undefined, on: boolean) => {
  const input = el as HTMLInputElement;
  input.checked = on;
  input.dispatchEvent(new Event('change', { bubbles: true }));
  flushSync();
};
const buttonNamed = (root: ParentNode, name: string) => [...root.querySelectorAll('button')].find((b) => b.textContent!.trim() === name || b.getAttribute('aria-label') === name);

describe('ProfilesCard', () => {
  it('lists the profiles with their facts and creates one with some tools of a server, in search mode', async () => {
    const created: ProfileView = { name: 'review', endpoint: '/mcp/p/review', servers: ['fs', 'git'], tools: { fs: ['read_file', 'list_directory'] }, toolSearch: true, toolCount: 2, reachableTools: 3 };
    const { sent, fetchFn } = fakeFetch(() => [201, created]);
    const changed: (ProfileView | undefined)[] = [];
    const target = await render(ProfilesCard, { props: { profiles: [coding, docs], servers, onchanged: (p?: ProfileView) => changed.push(p), fetchFn } });

    const row = target.querySelector('[data-profile="coding"]')!;
    expect(row.querySelector('[data-facts]')!.textContent).toBe('search · 23 tools behind 2');
    expect(row.textContent).toContain('used by cursor');
    expect(target.querySelector('[data-profile="docs"] [data-facts]')!.textContent).toBe('read-only · 12 tools');

    click(buttonNamed(target, 'New profile…'));
    const dlg = document.querySelector('dialog')!;
    // Nothing filled in: told at the fields, nothing sent.
    click(buttonNamed(dlg, 'Create profile'));
    await settle();
    expect(sent).toEqual([]);
    expect(dlg.textContent).toContain('A profile needs a name');
    expect(dlg.textContent).toContain('Pick at least one server.');

    const name = dlg.querySelector<HTMLInputElement>('#profile-name')!;
    name.value = 'review';
    name.dispatchEvent(new Event('input', { bubbles: true }));
    check(dlg.querySelector('[data-server-choice="fs"] input'), true);
    check(dlg.querySelector('[data-server-choice="git"] input'), true);
    // fs: only some of its tools, write_file unticked.
    const fs = dlg.querySelector('[data-server-choice="fs"]')!;
    check(fs.querySelectorAll('input')[1], true);
    const writeFile = [...fs.querySelectorAll('label')].find((l) => l.textContent!.includes('write_file'))!.querySelector('input');
    check(writeFile, false);
    const search = [...dlg.querySelectorAll('label')].find((l) => l.textContent!.includes('Search mode'))!.querySelector('input');
    check(search, true);
    click(buttonNamed(dlg, 'Create profile'));
    await settle();
    expect(sent).toEqual([
      { method: 'POST', url: '/api/v1/profiles', body: { name: 'review', servers: ['fs', 'git'], tools: { fs: ['read_file', 'list_directory'] }, toolSearch: true } },
    ]);
    expect(changed).toEqual([created]);
    expect(document.querySelector('dialog')).toBeNull();
  });

  it('edits a profile keeping what it had, and shows the daemon refusing a change', async () => {
    const { sent, fetchFn } = fakeFetch((m) => (m === 'PUT' && sent.length === 1 ? [400, { error: 'invalid profile: tools.fs[0]: server "fs" offers no tool "read_file"' }] : [200, docs]));
    const target = await render(ProfilesCard, { props: { profiles: [docs], servers, onchanged: () => {}, fetchFn } });
    click(buttonNamed(target, 'Edit profile docs'));
    const dlg = document.querySelector('dialog')!;
    expect(dlg.querySelector('#profile-name')).toBeNull(); // not renamed
    expect(dlg.querySelector<HTMLSelectElement>('select')!.value).toBe('read');
    click(buttonNamed(dlg, 'Save'));
    await settle();
    expect(sent[0]).toEqual({ method: 'PUT', url: '/api/v1/profiles/docs', body: { servers: ['fs'], tools: { fs: ['read_file'] }, maxTier: 'read' } });
    expect(dlg.querySelector('[role=alert]')!.textContent).toContain('offers no tool "read_file"');
    // Every tool of fs again, then saved.
    check(dlg.querySelector('[data-server-choice="fs"]')!.querySelectorAll('input')[1], false);
    click(buttonNamed(dlg, 'Save'));
    await settle();
    expect(sent[1].body).toEqual({ servers: ['fs'], maxTier: 'read' });
    expect(document.querySelector('dialog')).toBeNull();
  });

  it('turns asking before destructive calls on in the editor, through its own route after the profile is saved', async () => {
    const { sent, fetchFn } = fakeFetch((m, url, body) => (url.endsWith('/ask-before-destructive') ? [200, body] : [200, docs]));
    const changed: (ProfileView | undefined)[] = [];
    const target = await render(ProfilesCard, { props: { profiles: [docs], servers, onchanged: (p?: ProfileView) => changed.push(p), fetchFn } });
    expect(target.querySelector('[data-profile="docs"] [data-asks-first]')).toBeNull();
    click(buttonNamed(target, 'Edit profile docs'));
    const dlg = document.querySelector('dialog')!;
    const ask = dlg.querySelector<HTMLInputElement>('[data-ask-first]')!;
    expect(ask.checked).toBe(false);
    check(ask, true);
    click(buttonNamed(dlg, 'Save'));
    await settle();
    expect(sent).toEqual([
      { method: 'PUT', url: '/api/v1/profiles/docs', body: { servers: ['fs'], tools: { fs: ['read_file'] }, maxTier: 'read' } },
      { method: 'PUT', url: '/api/v1/profiles/docs/ask-before-destructive', body: { enabled: true } },
    ]);
    expect(changed).toEqual([{ ...docs, askBeforeDestructive: true }]);
    expect(document.querySelector('dialog')).toBeNull();
  });

  it('shows a profile that asks first, leaves the setting alone when it is not changed, and says when turning it off failed', async () => {
    const asking = { ...docs, askBeforeDestructive: true };
    const { sent, fetchFn } = fakeFetch((m, url) => (url.endsWith('/ask-before-destructive') ? [500, { error: 'config.json is read-only' }] : [200, asking]));
    const target = await render(ProfilesCard, { props: { profiles: [asking], servers, onchanged: () => {}, fetchFn } });
    expect(target.querySelector('[data-profile="docs"] [data-asks-first]')!.textContent).toContain('asks before destructive calls');
    click(buttonNamed(target, 'Edit profile docs'));
    let dlg = document.querySelector('dialog')!;
    expect(dlg.querySelector<HTMLInputElement>('[data-ask-first]')!.checked).toBe(true);
    click(buttonNamed(dlg, 'Save'));
    await settle();
    expect(sent.map((r) => r.url)).toEqual(['/api/v1/profiles/docs']);
    expect(document.querySelector('dialog')).toBeNull();

    click(buttonNamed(target, 'Edit profile docs'));
    dlg = document.querySelector('dialog')!;
    check(dlg.querySelector('[data-ask-first]'), false);
    click(buttonNamed(dlg, 'Save'));
    await settle();
    expect(sent.slice(1).map((r) => [r.url, r.body])).toEqual([
      ['/api/v1/profiles/docs', { servers: ['fs'], tools: { fs: ['read_file'] }, maxTier: 'read' }],
      ['/api/v1/profiles/docs/ask-before-destructive', { enabled: false }],
    ]);
    expect(dlg.querySelector('[role=alert]')!.textContent).toContain('Saved, but asking before destructive calls is still on: config.json is read-only');
  });

  it('deletes a profile after a confirmation, and offers no Delete for one a client is connected to', async () => {
    const { sent, fetchFn } = fakeFetch(() => [204, undefined]);
    let changes = 0;
    const target = await render(ProfilesCard, { props: { profiles: [coding, docs], servers, onchanged: () => changes++, fetchFn } });
    click(buttonNamed(target, 'Delete profile coding'));
    let dlg = document.querySelector('dialog')!;
    expect(dlg.querySelector('[data-in-use]')!.textContent).toContain('cursor is connected to it');
    expect(buttonNamed(dlg, 'Delete')!.hasAttribute('disabled')).toBe(true);
    click(buttonNamed(dlg, 'Cancel'));

    click(buttonNamed(target, 'Delete profile docs'));
    dlg = document.querySelector('dialog')!;
    click(buttonNamed(dlg, 'Delete'));
    await settle();
    expect(sent).toEqual([{ method: 'DELETE', url: '/api/v1/profiles/docs', body: undefined }]);
    expect(changes).toBe(1);
  });
});
