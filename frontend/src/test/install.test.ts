import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import { EventStream } from '../lib/events';
import { failure, fieldError, fieldsOf, initialValues, installablePackage, payload, serverNameError, validate } from '../lib/install';
import type { CatalogEntry } from '../lib/types';
import InstallDialog from '../components/InstallDialog.svelte';
import { FakeEventSource, flush } from './fakes';

const entry: CatalogEntry = {
  name: 'io.github.example/files',
  title: 'Files',
  description: 'Files on disk',
  version: '1.2.3',
  shortName: 'files',
  source: 'registry',
  packages: [
    { registryType: 'nuget', identifier: 'Nope' },
    {
      registryType: 'npm',
      identifier: '@example/files',
      version: '1.2.3',
      transport: { type: 'stdio' },
      environmentVariables: [
        { name: 'API_KEY', isRequired: true, isSecret: true, description: 'Your key' },
        { name: 'FIXED', value: 'x' },
        { name: 'PORT', format: 'number', default: '8080' },
        { name: 'VERBOSE', format: 'boolean' },
        { name: 'MODE', choices: ['fast', 'safe'] },
      ],
      packageArguments: [
        { type: 'positional', valueHint: 'root', format: 'directory', isRequired: true },
        { type: 'named', name: '--config', format: 'filepath' },
      ],
    },
  ],
};

describe('install dialog: what the server may reach', () => {
  afterEach(() => {
    document.body.innerHTML = '';
  });
  const preview = async (e: CatalogEntry) => {
    const cmp = mount(InstallDialog, { target: document.body, props: { entry: e, stream: new EventStream({ factory: (u) => new FakeEventSource(u) }), taken: [], onclose: () => {}, ondone: () => {} } });
    flushSync();
    const text = document.querySelector('[data-sandbox-preview]')?.textContent?.replace(/\s+/g, ' ') ?? '';
    await flush();
    unmount(cmp);
    return text;
  };

  it.each([
    ['an embedded entry without network', { ...entry, source: 'embedded', network: false }, 'No network: the catalog says it needs none.'],
    ['an embedded entry that needs it', { ...entry, source: 'embedded', network: true }, 'It may use the network (the catalog says it needs it), but never Switchboard\'s own port.'],
    ['a registry entry', { ...entry, source: 'registry' }, 'a registry entry does not say whether it needs it'],
  ])('%s', async (_, e, want) => {
    const text = await preview(e as CatalogEntry);
    expect(text).toContain('write only its data folder, a temporary folder of its own and those paths');
    expect(text).toContain(want);
  });

  it('is not shown for a remote', async () => {
    const remoteOnly: CatalogEntry = { ...entry, packages: [], remotes: [{ type: 'streamable-http', url: 'https://mcp.example.com/mcp' }] };
    expect(await preview(remoteOnly)).toBe('');
  });
});

describe('install inputs', () => {
  const fields = fieldsOf(installablePackage(entry));

  it('asks for every input without a fixed value, typed', () => {
    expect(fields.map((f) => [f.key, f.kind, f.format, f.required, f.secret])).toEqual([
      ['API_KEY', 'env', 'string', true, true],
      ['PORT', 'env', 'number', false, false],
      ['VERBOSE', 'env', 'boolean', false, false],
      ['MODE', 'env', 'string', false, false],
      ['root', 'arg', 'directory', true, false],
      ['--config', 'arg', 'filepath', false, false],
    ]);
    expect(initialValues(fields)).toEqual({ API_KEY: '', PORT: '8080', VERBOSE: false, MODE: '', root: '', '--config': '' });
  });

  it.each([
    ['API_KEY', '', 'API_KEY is required.'],
    ['API_KEY', '  ', 'API_KEY is required.'],
    ['API_KEY', 'k', ''],
    ['PORT', 'eighty', 'PORT must be a number.'],
    ['PORT', '8080', ''],
    ['PORT', '', ''],
    ['MODE', 'slow', 'Choose one of: fast, safe.'],
    ['MODE', 'safe', ''],
    ['root', 'relative/dir', 'root must be an absolute path (starting with / or ~).'],
    ['root', '/home/me', ''],
    ['root', '~/code', ''],
    ['root', 'C:\\Users\\me', ''],
    ['--config', '', ''],
  ])('%s = %j → %j', (key, value, want) => {
    expect(fieldError(fields.find((f) => f.key === key)!, value)).toBe(want);
  });

  it('validates server names like the config does', () => {
    expect(serverNameError('')).toMatch(/required/);
    expect(serverNameError('a__b')).toMatch(/without "__"/);
    expect(serverNameError('-x')).toMatch(/starting with a letter/);
    expect(serverNameError('x'.repeat(49))).toMatch(/1 to 48/);
    expect(serverNameError('files', ['files'])).toMatch(/exists already/);
    expect(serverNameError('files.v2')).toBe('');
  });

  it('splits a failed install\'s error into its phase and its message', () => {
    expect(failure('installing fs failed during resolve: invalid inputs: input root: path "/x" does not exist\nlast output:\n  a', 'verify')).toEqual({
      phase: 'resolve',
      message: 'invalid inputs: input root: path "/x" does not exist',
    });
    expect(failure('adding fs to config.json: busy', 'verify')).toEqual({ phase: 'verify', message: 'adding fs to config.json: busy' });
  });

  it('sends strings, booleans as "true"/"false", and leaves out empty optional values', () => {
    const values = { ...initialValues(fields), API_KEY: ' k ', VERBOSE: true, root: '/srv' };
    expect(validate(fields, values)).toEqual({});
    expect(payload(fields, values)).toEqual({ API_KEY: 'k', PORT: '8080', VERBOSE: 'true', root: '/srv' });
  });
});

describe('InstallDialog', () => {
  let cmp: ReturnType<typeof mount> | null = null;
  afterEach(() => {
    if (cmp) unmount(cmp);
    cmp = null;
    document.body.innerHTML = '';
  });

  // The daemon's folders, as POST /api/v1/paths/check answers for them.
  const FOLDERS = ['/srv/data', '/home/me'];
  function render() {
    const made: FakeEventSource[] = [];
    const checks: { path: string; kind: string }[] = [];
    const stream = new EventStream({ factory: (u) => (made.push(new FakeEventSource(u)), made[made.length - 1]) });
    stream.start();
    const posts: { url: string; body: any }[] = [];
    const fetchFn = (async (url: string, init: RequestInit) => {
      if (url === '/api/v1/paths/check') {
        const b = JSON.parse(String(init.body));
        checks.push(b);
        const ok = FOLDERS.includes(b.path);
        return new Response(JSON.stringify({ exists: ok, isDir: ok, error: ok ? undefined : `path "${b.path}" does not exist` }), { status: 200 });
      }
      posts.push({ url, body: JSON.parse(String(init.body)) });
      // The daemon may send the first event before its answer arrives.
      made[0].emit('install', { id: 'i1', phase: 'resolve', line: 'resolving @example/files' }, 1);
      return new Response(JSON.stringify({ id: 'i1' }), { status: 202 });
    }) as typeof fetch;
    let closed = 0;
    let done = '';
    cmp = mount(InstallDialog, {
      target: document.body,
      props: { entry, stream, taken: ['other'], onclose: () => closed++, ondone: (s: string) => (done = s), fetchFn },
    });
    flushSync();
    return { es: () => made[0], posts, checks, closed: () => closed, done: () => done };
  }

  const input = (id: string) => document.getElementById(id) as HTMLInputElement;
  const submit = () => (document.querySelector('button[type=submit]') as HTMLButtonElement).click();
  const type = (id: string, v: string) => {
    input(id).value = v;
    input(id).dispatchEvent(new Event('input', { bubbles: true }));
  };

  it('marks required inputs, uses a password field for secrets, and blocks an invalid form', async () => {
    const { posts } = render();
    expect(input('inst-API_KEY').type).toBe('password');
    expect(input('inst-PORT').type).toBe('number');
    expect(input('inst-VERBOSE').type).toBe('checkbox');
    expect(document.querySelector('label[for=inst-API_KEY]')!.textContent).toContain('(required)');
    expect(input('inst-name').value).toBe('files');

    submit();
    flushSync();
    await flush();
    expect(posts).toHaveLength(0);
    expect(input('inst-API_KEY').getAttribute('aria-invalid')).toBe('true');
    expect(document.getElementById('inst-API_KEY-help')!.textContent).toBe('API_KEY is required.');
    expect(document.getElementById('inst-root-help')!.textContent).toBe('root is required.');

    type('inst-root', 'not/absolute');
    flushSync();
    expect(document.getElementById('inst-root-help')!.textContent).toMatch(/absolute path/);
  });

  it('installs, follows the install events and shows the verified tools', async () => {
    const { posts, es, done } = render();
    type('inst-API_KEY', 'secret');
    type('inst-root', '/srv/data');
    type('inst-name', 'my-files');
    submit();
    await flush();
    flushSync();
    expect(posts).toEqual([
      { url: '/api/v1/installs', body: { entry: 'io.github.example/files', server: 'my-files', values: { API_KEY: 'secret', PORT: '8080', VERBOSE: 'false', root: '/srv/data' } } },
    ]);
    // The early event was kept until the id was known.
    expect(document.querySelector('pre.out')!.textContent).toContain('resolving @example/files');

    es().emit('install', { id: 'other', phase: 'verify', line: 'not ours' }, 2);
    es().emit('install', { id: 'i1', phase: 'download', line: 'added 12 packages' }, 3);
    es().emit('install', { id: 'i1', phase: 'verify', line: 'listing tools' }, 4);
    flushSync();
    const out = document.querySelector('pre.out')!.textContent!;
    expect(out).toContain('added 12 packages');
    expect(out).not.toContain('not ours');
    expect(document.querySelector('li[aria-current=step]')!.textContent).toContain('Verify');

    es().emit('install', { id: 'i1', phase: 'verify', done: true, tools: ['read_file', { name: 'write_file', description: 'Writes' }] }, 5);
    flushSync();
    expect(document.body.textContent).toContain('my-files is installed and verified.');
    expect([...document.querySelectorAll('.tools li')].map((li) => li.textContent)).toEqual(['read_file', 'write_file — Writes']);
    expect(done()).toBe('my-files');
  });

  it('shows a failed install where it happened', async () => {
    const { es } = render();
    type('inst-API_KEY', 'secret');
    type('inst-root', '/srv/data');
    submit();
    await flush();
    es().emit('install', { id: 'i1', phase: 'install', done: true, error: 'npm exited with 1' }, 2);
    flushSync();
    expect(document.querySelector('[role=alert]')!.textContent).toBe('Install failed: npm exited with 1');
    expect(document.querySelector('li.failed')!.textContent).toContain('Install');
  });

  it('marks the phase the error names, shows the error once, and Back keeps the inputs', async () => {
    const { es, posts } = render();
    type('inst-API_KEY', 'secret');
    type('inst-root', '/srv/data');
    type('inst-PORT', '9090');
    type('inst-name', 'my-files');
    submit();
    await flush();
    es().emit('install', { id: 'i1', phase: 'download', line: 'npm error 404 Not Found' }, 2);
    // An older daemon sent "verify" with the error: the error's own phase wins.
    const error = 'installing my-files failed during download: npm install failed\nlast output:\n  npm error 404 Not Found';
    es().emit('install', { id: 'i1', phase: 'verify', done: true, error, line: 'install failed: ' + error }, 3);
    flushSync();
    const chips = [...document.querySelectorAll('ol.phases li')].map((li) => `${li.classList[0]}:${li.textContent!.replace(/\s*\(.*\)$/, '').replace(/\s+/g, ' ').trim()}`);
    expect(chips).toEqual(['done:✓ Resolve', 'failed:✕ Download', 'todo:3 Install', 'todo:4 Verify']);
    expect(document.querySelector('[role=alert]')!.textContent).toBe('Download failed: npm install failed');
    // The 404 line once, in the installer's output; the error nowhere else.
    expect(document.body.textContent!.split('npm error 404 Not Found')).toHaveLength(2);
    expect(document.body.textContent!.split('npm install failed')).toHaveLength(2);
    expect(document.querySelector('[data-progress]')).toBeNull();

    const backBtn = [...document.querySelectorAll('button')].find((b) => b.textContent === 'Back')!;
    backBtn.click();
    flushSync();
    expect(input('inst-name').value).toBe('my-files');
    expect(input('inst-API_KEY').value).toBe('secret');
    expect(input('inst-root').value).toBe('/srv/data');
    expect(input('inst-PORT').value).toBe('9090');
    submit();
    await flush();
    expect(posts).toHaveLength(2);
    expect(posts[1].body.values).toEqual(posts[0].body.values);
  });

  it('checks a path input with the daemon when it is left and before the install', async () => {
    const { posts, checks } = render();
    type('inst-API_KEY', 'secret');
    type('inst-root', '/srv/nope');
    input('inst-root').dispatchEvent(new Event('change', { bubbles: true }));
    await flush();
    flushSync();
    expect(checks).toEqual([{ path: '/srv/nope', kind: 'directory' }]);
    expect(document.getElementById('inst-root-help')!.textContent).toBe('root: path "/srv/nope" does not exist.');
    submit();
    await flush();
    flushSync();
    expect(posts).toHaveLength(0);
    expect(checks).toHaveLength(1); // the same value is not asked again

    type('inst-root', '/srv/data');
    submit();
    await flush();
    expect(checks.at(-1)).toEqual({ path: '/srv/data', kind: 'directory' });
    expect(posts).toHaveLength(1);
    expect(posts[0].body.values.root).toBe('/srv/data');
  });

  it('closes on Escape', () => {
    const { closed } = render();
    document.querySelector('dialog')!.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    expect(closed()).toBe(1);
  });
});
