import { afterEach, describe, expect, it, vi } from 'vitest';
import Servers from '../pages/Servers.svelte';
import { appContext, createAppContext } from '../lib/app';
import { featured, needsInput } from '../lib/featured';
import type { CatalogEntry } from '../lib/types';
import { fakeStream, render, settle, unmountAll } from './mount';

afterEach(unmountAll);

const npm = (identifier: string, extra: object = {}) => [{ registryType: 'npm', identifier, version: '1.0.0', transport: { type: 'stdio' }, ...extra }];
const entry = (short: string, extra: Partial<CatalogEntry> = {}): CatalogEntry => ({
  name: `io.github.modelcontextprotocol/server-${short}`,
  title: short[0].toUpperCase() + short.slice(1),
  description: `The ${short} server`,
  version: '1.0.0',
  shortName: short,
  source: 'embedded',
  status: 'active',
  packages: npm(`@modelcontextprotocol/server-${short}`),
  ...extra,
});
const filesystem = entry('filesystem', {
  packages: npm('@modelcontextprotocol/server-filesystem', { packageArguments: [{ type: 'positional', valueHint: 'directory', format: 'directory', isRequired: true }] }),
});
const memory = entry('memory');
const everything = entry('everything');
const remoteOnly = entry('hosted', { packages: [], remotes: [{ type: 'streamable-http', url: 'https://h.example/mcp' }], kind: 'remote' });
const brave = entry('brave', { source: 'registry', packages: npm('@brave/x', { environmentVariables: [{ name: 'BRAVE_API_KEY', isRequired: true, isSecret: true }] }) });
const registryOne = entry('notes', { source: 'registry' });

describe('featured', () => {
  it('features the usual first servers, then curated ones that need nothing, never one that cannot run here', () => {
    expect(needsInput(filesystem)).toBe(true);
    expect(needsInput(memory)).toBe(false);
    expect(needsInput(brave)).toBe(true);
    const got = featured([remoteOnly, brave, registryOne, everything, memory, filesystem]);
    expect(got.map((e) => e.shortName)).toEqual(['filesystem', 'memory', 'everything', 'notes']);
    expect(featured([remoteOnly, brave])).toEqual([]);
    expect(featured([everything, memory, filesystem], 2).map((e) => e.shortName)).toEqual(['filesystem', 'memory']);
  });
});

describe('the first run', () => {
  function stubDaemon() {
    const posts: { url: string; body: unknown }[] = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit = {}) => {
      if (init.method === 'POST') {
        posts.push({ url, body: JSON.parse(String(init.body)) });
        return new Response(JSON.stringify({ id: 'inst-1' }), { status: 202 });
      }
      if (url.startsWith('/api/v1/catalog')) return new Response(JSON.stringify({ entries: [remoteOnly, brave, memory, filesystem], source: 'registry' }), { status: 200 });
      return new Response('[]', { status: 200 });
    });
    return posts;
  }

  it('leads with featured catalog servers: one click installs one that needs nothing, one that needs a folder opens its form', async () => {
    const posts = stubDaemon();
    const stream = fakeStream();
    const ctx = createAppContext(stream);
    await ctx.servers.refresh();
    const target = await render(Servers, { props: { selected: '' }, context: appContext(ctx) });
    await settle();

    const cards = [...target.querySelectorAll<HTMLElement>('[data-featured-entry]')];
    expect(cards.map((c) => c.dataset.featuredEntry)).toEqual(['filesystem', 'memory']);
    const button = (c: HTMLElement) => c.querySelector('button')!;
    expect(button(cards[0]).textContent).toBe('Install…');
    expect(button(cards[1]).textContent).toBe('Install');
    expect(button(cards[1]).classList.contains('primary')).toBe(true);
    // The raw command form is there, but not the primary way in.
    const add = [...target.querySelectorAll('header button')].find((b) => b.textContent === 'Add server')!;
    expect(add.classList.contains('primary')).toBe(false);
    expect(target.querySelector('.firstrun')!.textContent).toContain('Connect a client');

    button(cards[1]).click();
    await settle();
    expect(posts).toEqual([{ url: '/api/v1/installs', body: { entry: memory.name, server: 'memory', values: {} } }]);
    expect(document.querySelector('dialog ol.phases')).not.toBeNull();
    (document.querySelector('dialog header button') as HTMLButtonElement).click();
    await settle();

    button(cards[0]).click();
    await settle();
    expect(posts.length).toBe(1); // the form, not an install
    expect(document.querySelector('dialog #inst-name')).not.toBeNull();
  });
});
