// A small stand-in for the Switchboard daemon, for the dashboard's e2e walk
// on machines without the daemon: it serves dist/ like the daemon does
// (index.html for unknown non-API paths), the /login?code= cookie flow, the
// /api/v1 routes the dashboard uses with canned but consistent data, and the
// /api/v1/events SSE stream (ids, Last-Event-ID, keep-alives).
//
//   node e2e/fake-api.mjs [--port 0] [--dist dist]   prints "listening http://127.0.0.1:PORT"

import http from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

// gradientPNG is a w×h PNG (RGB), a gradient: what the fake's getTinyImage answers.
function gradientPNG(w = 24, h = 24) {
  const raw = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) raw.set([Math.round((x * 255) / w), Math.round((y * 128) / h), 255 - Math.round((x * 255) / w)], y * (w * 3 + 1) + 1 + x * 3);
  const chunk = (type, data) => {
    const td = Buffer.concat([Buffer.from(type), data]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]).toString('base64');
}

const COOKIE = 'switchboard_session';
const SESSION = 'fake-session';
const CODE = 'e2e';

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.png': 'image/png', '.json': 'application/json' };

function makeState(now) {
  const iso = (ms) => new Date(ms).toISOString();
  const servers = {
    everything: {
      config: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything@2025.11.25'], disabledTools: ['longRunningOperation'],
        install: { entry: 'io.github.modelcontextprotocol/server-everything', version: '2025.11.25', type: 'npm' } },
      state: 'running', restarts: 0,
      tools: ['echo', 'add', 'longRunningOperation', 'printEnv', 'sampleLLM', 'getTinyImage', 'annotatedMessage', 'getResourceReference'].map((name) => ({ name, description: `The ${name} tool` })),
      processes: [{ pid: 4242, state: 'ready', started: iso(now - 3_600_000), inFlight: 0, leased: false, serverInfo: 'example-servers/everything 1.0.0', protocol: '2025-11-25' }],
      usage: { cpuPercent: 2.5, rssBytes: 84 * 1048576, processes: 2 },
    },
    filesystem: {
      config: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem@2025.8.21', '/home/me/projects'] },
      state: 'failing', restarts: 5, lastError: 'exited with status 1: Error: ENOENT: no such file or directory, stat /home/me/projects',
      tools: [], processes: [],
    },
    github: {
      config: { command: 'docker', args: ['run', '-i', '--rm', 'ghcr.io/github/github-mcp-server'], env: { GITHUB_PERSONAL_ACCESS_TOKEN: '••••••' }, enabled: false },
      state: 'disabled', restarts: 0, tools: undefined, processes: [],
    },
    time: {
      config: { command: 'uvx', args: ['mcp-server-time'] },
      state: 'stopped', restarts: 1, tools: [{ name: 'get_current_time' }, { name: 'convert_time' }], processes: [],
      // Its last sample from before it stopped (the daemon may still have one).
      usage: { cpuPercent: 0.4, rssBytes: 58.4 * 1048576, processes: 1 },
    },
    // A remote server behind OAuth that was never signed in: its calls
    // fail until the user signs in (POST .../login, then the browser).
    notion: {
      config: { url: 'https://mcp.notion.example/mcp', transport: 'streamable-http' },
      state: 'failing', restarts: 0, processes: [], tools: undefined,
      lastError: 'remote server "notion" needs sign-in (first use): run `switchboard auth login notion`',
      auth: { state: 'needs sign-in', reason: 'first use', since: iso(now - 600_000) },
    },
  };
  // 5000 calls over the last 24 h, newest first.
  const tools = [['everything', 'echo'], ['everything', 'add'], ['everything', 'printEnv'], ['time', 'get_current_time'], ['filesystem', 'read_file']];
  const clients = [['claude-desktop', 'Claude Desktop'], ['cursor', 'Cursor'], ['vscode', 'VS Code']];
  const calls = [];
  for (let i = 0; i < 5000; i++) {
    // Now and then a tool of a server nobody configured, or a tool a
    // known server does not offer: the gateway answers them (unknown).
    // (A bare name on /mcp, with no prefix, names no server at all.)
    const unknown = i % 250 === 7 || i % 250 === 20 ? 'server' : i % 250 === 11 ? 'tool' : undefined;
    const [server, tool] = i % 250 === 7 ? ['', 'echo'] : unknown === 'server' ? ['nosuch', 'tool'] : unknown === 'tool' ? ['everything', 'nosuch'] : tools[i % tools.length];
    const [label, cname] = clients[i % 3];
    // Through /mcp (prefixed names), the server's own endpoint, or a profile's.
    const endpoint = unknown ? '' : ['', server, 'p/coding'][i % 3 === 0 ? 0 : (i >> 1) % 3];
    const name = endpoint === server || !server ? tool : `${server}__${tool}`;
    const outcome = unknown ? 'protocol_error' : server === 'filesystem' ? 'server_unavailable' : i % 41 === 0 ? 'tool_error' : i % 97 === 0 ? 'timeout' : 'ok';
    calls.push({
      id: 5000 - i, start: iso(now - i * 17_000 - 500), duration: (3 + (i % 13) * 7) * 1e6 + (i % 5) * 1e5,
      clientLabel: label, clientName: cname, clientVersion: '1.0', session: `s${i % 7}`, endpoint, server, method: 'tools/call', name, tool, unknown, outcome,
      error: outcome === 'ok' ? undefined : outcome === 'protocol_error' ? `unknown tool "${name}"` : outcome === 'tool_error' ? 'invalid arguments: "a" must be a number' : outcome === 'timeout' ? 'no answer within 60s' : 'server filesystem is failing',
      responseSize: 120 + (i % 50) * 31,
    });
  }
  return {
    servers,
    calls,
    nextCall: 5001,
    tokens: [
      { id: 't-cli', label: 'cli', scope: 'admin', created: iso(now - 9 * 86_400_000), lastUsed: iso(now - 60_000) },
      { id: 't-dash', label: 'dashboard', scope: 'admin', created: iso(now - 9 * 86_400_000), lastUsed: iso(now - 1000) },
      { id: 't-cursor', label: 'cursor', scope: 'client', created: iso(now - 5 * 86_400_000), lastUsed: iso(now - 120_000) },
      { id: 't-claude', label: 'claude-desktop', scope: 'client', profile: 'coding', created: iso(now - 2 * 86_400_000), lastUsed: iso(now - 3_600_000) },
      { id: 't-vscode', label: 'vscode', scope: 'client', created: iso(now - 86_400_000) },
    ],
    clients: {
      'claude-desktop': { id: 'claude-desktop', name: 'Claude Desktop', path: '/home/me/.config/Claude/claude_desktop_config.json', installed: true, connected: false, servers: [{ Name: 'sqlite', Command: 'uvx', Args: ['mcp-server-sqlite', '--db-path', '/home/me/test.db'] }] },
      cursor: { id: 'cursor', name: 'Cursor', path: '/home/me/.cursor/mcp.json', installed: true, connected: true, servers: [{ Name: 'switchboard', URL: 'http://127.0.0.1:7777/mcp', Headers: { Authorization: '••••••' } }],
        tools: 48, toolLimit: 40, toolLimitSource: "Cursor's MCP docs and forum", warning: 'Cursor sees 48 tools on /mcp, more than the 40 it takes: connect it to a profile with fewer tools (clients connect cursor --profile NAME)' },
      'claude-code': { id: 'claude-code', name: 'Claude Code', path: '/home/me/.claude.json', installed: true, connected: false, servers: [] },
      vscode: { id: 'vscode', name: 'VS Code', path: '/home/me/.config/Code/User/mcp.json', installed: false, connected: false, servers: [] },
    },
    profiles: [
      { name: 'coding', endpoint: '/mcp/p/coding', servers: ['everything', 'time'], toolCount: 12, clients: [] },
      { name: 'research', endpoint: '/mcp/p/research', servers: ['everything', 'time', 'filesystem'], toolSearch: true, toolCount: 2, reachableTools: 10, clients: [] },
    ],
    backups: { cursor: [{ client: 'cursor', path: '/home/me/.cursor/mcp.json', file: 'cursor/1.json', absent: false, time: iso(now - 5 * 86_400_000) }] },
    settings: { retention: { maxAge: '720h', maxBytes: 500 * 1048576 }, startAtLogin: true },
    catalog: [
      { name: 'io.github.modelcontextprotocol/server-everything', title: 'Everything', description: 'A test server that exercises every MCP feature: tools, prompts, resources, sampling.', version: '2025.11.25', shortName: 'everything', source: 'embedded', status: 'active', repository: { url: 'https://github.com/modelcontextprotocol/servers', source: 'github', subfolder: 'src/everything' },
        packages: [{ registryType: 'npm', identifier: '@modelcontextprotocol/server-everything', version: '2025.11.25', transport: { type: 'stdio' } }] },
      { name: 'io.github.modelcontextprotocol/server-filesystem', title: 'Filesystem', description: 'Read, write and search files in the folders you allow.', version: '2025.8.21', shortName: 'files', source: 'registry', status: 'active', repository: { url: 'https://github.com/modelcontextprotocol/servers', source: 'github' },
        packages: [{ registryType: 'npm', identifier: '@modelcontextprotocol/server-filesystem', version: '2025.8.21', transport: { type: 'stdio' },
          packageArguments: [{ type: 'positional', valueHint: 'allowed_directory', format: 'directory', isRequired: true, description: 'A folder the server may use' }],
          environmentVariables: [{ name: 'LOG_LEVEL', description: 'How much to log', choices: ['error', 'info', 'debug'], default: 'info' }] }] },
      { name: 'io.github.modelcontextprotocol/server-memory', title: 'Memory', description: 'A persistent knowledge graph the model can store and recall facts in.', version: '2026.1.26', shortName: 'memory', source: 'registry', status: 'active',
        packages: [{ registryType: 'npm', identifier: '@modelcontextprotocol/server-memory', version: '2026.1.26', transport: { type: 'stdio' } }] },
      { name: 'io.github.brave/brave-search-mcp-server', title: 'Brave Search', description: 'Web and local search through the Brave Search API.', version: '2.0.58', shortName: 'brave-search', source: 'registry', status: 'active',
        packages: [{ registryType: 'npm', identifier: '@brave/brave-search-mcp-server', version: '2.0.58', transport: { type: 'stdio' },
          environmentVariables: [{ name: 'BRAVE_API_KEY', description: 'Your Brave Search API key', isRequired: true, isSecret: true }, { name: 'BRAVE_MAX_RESULTS', format: 'number', description: 'Results per query' }, { name: 'BRAVE_SAFE', format: 'boolean', description: 'Safe search' }] }] },
      { name: 'io.github.example/remote-only', title: 'Remote only', description: 'A hosted server (streamable HTTP): installing it connects Switchboard to it, with your API key and a sign-in.', version: '0.3.0', source: 'registry', status: 'active', kind: 'remote', shortName: 'remote-only', packages: [],
        remotes: [{ type: 'streamable-http', url: 'https://{workspace}.remote.example/mcp', variables: { workspace: { isRequired: true, description: 'Your workspace' } },
          headers: [{ name: 'X-Api-Key', isRequired: true, isSecret: true, description: 'Your API key' }] }] },
    ],
  };
}

// The fake daemon's disk, for POST /paths/check: only these exist.
const FAKE_DIRS = ['/', '/tmp', '/home', '/home/me', '/home/me/code'];
const FAKE_FILES = ['/home/me/notes.txt'];

function view(name, s) {
  return {
    name, config: s.config, enabled: s.config.enabled !== false, state: s.config.enabled === false ? 'disabled' : s.state,
    mode: 'shared', processes: s.processes ?? [], restarts: s.restarts ?? 0, lastError: s.lastError, usage: s.usage,
    recentLogs: [], tools: s.tools ?? [], listed: s.tools !== undefined, auth: s.auth,
    // As app/api/servers.go words it for a remote server and a hand-added one.
    sandbox: s.config.url
      ? { confined: false, network: false, enforced: false, reason: 'a remote server: it runs on its own host, nothing runs here to confine' }
      : { confined: false, network: false, enforced: false, reason: 'not confined: added by hand, and the config\'s "sandboxDefault" is not "confined"' },
  };
}

const DIFF = (path, body) => `--- ${path}\n+++ ${path}\n@@ -1,5 +1,9 @@\n {\n   "mcpServers": {\n${body}\n   }\n }\n`;

export function startFakeApi({ port = 0, dist = resolve(fileURLToPath(new URL('../dist', import.meta.url))) } = {}) {
  const st = makeState(Date.now());
  const streams = new Set();
  const log = []; // [id, type, json]
  let nextId = 1;
  const emit = (type, data) => {
    const id = nextId++;
    const json = JSON.stringify(data);
    log.push([id, type, json]);
    if (log.length > 2000) log.shift();
    for (const res of streams) res.write(`id: ${id}\nevent: ${type}\ndata: ${json}\n\n`);
  };

  // The live side: samples every 2 s, a call and a log line now and then.
  let tick = 0;
  const timer = setInterval(() => {
    tick++;
    const now = new Date().toISOString();
    for (const [name, s] of Object.entries(st.servers)) {
      if (s.state !== 'running') continue;
      s.usage = { cpuPercent: 1 + ((tick * 7 + name.length) % 20) / 2, rssBytes: (80 + ((tick * 3) % 12)) * 1048576, processes: 2 };
      emit('sample', { server: name, time: now, ...s.usage });
    }
    if (tick % 2 === 0 && st.servers.everything?.state === 'running') {
      const c = { id: st.nextCall++, start: now, duration: (4 + (tick % 9)) * 1e6, clientLabel: 'cursor', clientName: 'Cursor', clientVersion: '1.0', session: 's1', endpoint: '', server: 'everything', method: 'tools/call', name: 'everything__echo', tool: 'echo', outcome: 'ok', responseSize: 64 };
      st.calls.unshift(c);
      emit('call', c);
      emit('log', { server: 'everything', time: now, pid: 4242, stream: 'stderr', text: `handled tools/call echo (${tick})` });
    }
  }, 2000);
  const keepAlive = setInterval(() => {
    for (const res of streams) res.write(': keep-alive\n\n');
  }, 15000);

  const json = (res, status, body) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(body === undefined ? '' : JSON.stringify(body));
  };
  const body = (req) =>
    new Promise((ok) => {
      let b = '';
      req.on('data', (c) => (b += c));
      req.on('end', () => {
        try {
          ok(b ? JSON.parse(b) : {});
        } catch {
          ok(null);
        }
      });
    });
  const since = (v) => {
    if (!v) return 0;
    const m = /^(\d+)(m|h)$/.exec(v);
    if (m) return Date.now() - Number(m[1]) * (m[2] === 'm' ? 60_000 : 3_600_000);
    return Date.parse(v) || 0;
  };
  const filterCalls = (q) => {
    const s = since(q.get('since'));
    const u = q.get('until') ? Date.parse(q.get('until')) : Infinity;
    const text = (q.get('q') ?? '').toLowerCase();
    return st.calls.filter((c) => {
      const t = Date.parse(c.start);
      if (t < s || t > u) return false;
      if (q.get('server') && c.server !== q.get('server')) return false;
      if (q.get('tool') && c.name !== q.get('tool') && c.tool !== q.get('tool')) return false;
      if (q.get('client') && c.clientLabel !== q.get('client') && c.clientName !== q.get('client')) return false;
      const o = q.get('outcome');
      if (o && (o === 'error' ? c.outcome === 'ok' : c.outcome !== o)) return false;
      if (text && !`${c.server} ${c.name} ${c.error ?? ''}`.toLowerCase().includes(text)) return false;
      return true;
    });
  };
  const stats = (calls, key) => {
    const groups = new Map();
    for (const c of calls) {
      const k = JSON.stringify(key(c));
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push(c);
    }
    return [...groups].map(([json, cs]) => {
      const k = JSON.parse(json);
      const d = cs.map((c) => c.duration).sort((a, b) => a - b);
      const errors = cs.filter((c) => c.outcome !== 'ok').length;
      return { ...k, count: cs.length, errors, errorRate: errors / cs.length, p50: d[Math.ceil(d.length * 0.5) - 1], p95: d[Math.ceil(d.length * 0.95) - 1] };
    });
  };
  const setState = (name, state, kind, extra = {}) => {
    const s = st.servers[name];
    s.state = state;
    if (state === 'running') s.processes = [{ pid: 5000 + Math.floor(Math.random() * 1000), state: 'ready', started: new Date().toISOString(), inFlight: 0, leased: false }];
    if (state === 'stopped') s.processes = [];
    emit('state', { server: name, time: new Date().toISOString(), kind, state, ...extra });
  };

  // A profile as GET /profiles shows it: its tool counts from its servers'
  // tools (the fake's two canned profiles keep theirs), its clients from
  // the tokens bound to it.
  const boundTo = (name) => st.tokens.filter((t) => t.profile === name).map((t) => t.label);
  const profileView = (prof) => {
    const clients = boundTo(prof.name);
    const out = { ...prof, clients: clients.length ? clients : undefined };
    if (prof.toolCount !== undefined) return out; // the canned ones
    let reach = 0;
    for (const s of prof.servers) reach += prof.tools?.[s]?.length ?? st.servers[s]?.tools?.length ?? 0;
    return { ...out, toolCount: prof.toolSearch ? 2 : reach, reachableTools: reach };
  };

  async function api(req, res, url) {
    const p = url.pathname.slice('/api/v1'.length);
    const q = url.searchParams;
    const m = req.method;
    let r;
    if (m === 'GET' && p === '/status') return json(res, 200, { version: '0.9.0-e2e', pid: process.pid, home: '/home/me/.local/share/switchboard', configFile: '/home/me/.local/share/switchboard/config.json', listen: req.headers.host, started: new Date(Date.now() - 7200_000).toISOString(), servers: Object.keys(st.servers).length, running: Object.values(st.servers).filter((s) => s.state === 'running').length });
    if (m === 'GET' && p === '/events') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
      const last = Number(req.headers['last-event-id'] ?? q.get('since') ?? 0);
      if (last > 0) {
        if (log.length && log[0][0] > last + 1) res.write(`id: ${nextId - 1}\nevent: reset\ndata: {}\n\n`);
        else for (const [id, type, data] of log) if (id > last) res.write(`id: ${id}\nevent: ${type}\ndata: ${data}\n\n`);
      }
      res.write(': hello\n\n');
      streams.add(res);
      req.on('close', () => streams.delete(res));
      return;
    }
    if (m === 'GET' && p === '/servers') return json(res, 200, Object.keys(st.servers).sort().map((n) => view(n, st.servers[n])));
    if (m === 'POST' && p === '/servers') {
      const b = await body(req);
      if (!b?.name) return json(res, 400, { error: 'invalid request body: "name" is missing' });
      if (st.servers[b.name]) return json(res, 409, { error: `server "${b.name}" already exists` });
      st.servers[b.name] = { config: b.server, state: 'stopped', restarts: 0, processes: [] };
      emit('config', {});
      return json(res, 201, view(b.name, st.servers[b.name]));
    }
    if ((r = /^\/servers\/([^/]+)(?:\/(\w+))?$/.exec(p))) {
      const name = decodeURIComponent(r[1]);
      const s = st.servers[name];
      if (!s) return json(res, 404, { error: `unknown server "${name}": it is not in config.json` });
      const verb = r[2];
      if (!verb && m === 'GET') return json(res, 200, view(name, s));
      if (!verb && m === 'PUT') {
        const b = await body(req);
        if (!b || typeof b.command !== 'string' || !b.command) return json(res, 400, { error: `invalid server: servers.${name}.command: required` });
        s.config = b;
        if (b.enabled === false) s.state = 'disabled';
        else if (s.state === 'disabled') s.state = 'stopped';
        emit('config', {});
        return json(res, 200, view(name, s));
      }
      if (!verb && m === 'DELETE') {
        delete st.servers[name];
        emit('config', {});
        res.writeHead(204).end();
        return;
      }
      if (verb === 'logs') return json(res, 200, Array.from({ length: 30 }, (_, i) => ({ time: new Date(Date.now() - (30 - i) * 60_000).toISOString(), pid: 4242, stream: 'stderr', text: i === 3 ? 'Secure MCP server running on stdio' : `[info] handled request ${i}` })));
      if (m === 'POST' && (verb === 'login' || verb === 'logout')) {
        if (!s.config.url) return json(res, 400, { error: `server "${name}" is a local process, not a remote server: it has no sign-in` });
        if (verb === 'logout') {
          clearTimeout(s.signInTimer);
          s.auth = { state: 'needs sign-in', reason: 'signed out', since: new Date().toISOString() };
          s.state = 'failing';
          s.processes = [];
          s.lastError = `remote server "${name}" needs sign-in (signed out): run \`switchboard auth login ${name}\``;
          emit('auth', { server: name, state: s.auth.state, reason: s.auth.reason });
          return json(res, 200, { server: name, revoked: true, auth: s.auth });
        }
        // The fake "browser" does not open: the page shows the link; the
        // user "comes back" from it 1.5 s later.
        const link = `https://auth.notion.example/authorize?client_id=switchboard&state=${Date.now().toString(36)}`;
        s.auth = { state: 'signing in', reason: s.auth?.reason, signInUrl: link, since: new Date().toISOString() };
        emit('auth', { server: name, state: s.auth.state, reason: s.auth.reason });
        clearTimeout(s.signInTimer);
        s.signInTimer = setTimeout(() => {
          s.auth = { state: 'signed in', since: new Date().toISOString() };
          s.lastError = undefined;
          s.tools = [{ name: 'search', description: 'Search the workspace' }, { name: 'fetch', description: 'Fetch a page' }];
          emit('auth', { server: name, state: 'signed in' });
          setState(name, 'running', 'ready');
          s.processes = [{ pid: 0, state: 'ready', started: new Date().toISOString(), inFlight: 0, leased: false, transport: 'streamable-http', serverInfo: 'notion-mcp 1.0.0', protocol: '2025-11-25' }];
          emit('tools', { server: name });
        }, 1500);
        return json(res, 200, { server: name, signInUrl: link, browserOpened: false, auth: s.auth });
      }
      if (m === 'GET' && verb === 'update') {
        // As app/api/installs.go's checkUpdate against the fake's catalog.
        if (!s.config.install) return json(res, 400, { error: `server "${name}" was not installed from the catalog` });
        const e = st.catalog.find((x) => x.name === s.config.install.entry);
        const latest = e?.version ?? s.config.install.version;
        return json(res, 200, { server: name, entry: s.config.install.entry, installed: s.config.install.version, latest, available: latest !== s.config.install.version });
      }
      if (m === 'POST' && ['start', 'stop', 'restart', 'update'].includes(verb)) {
        if (s.config.enabled === false) return json(res, 409, { error: `server "${name}" is disabled in config.json; set "enabled": true to use it` });
        if (name === 'filesystem' && verb !== 'stop') {
          setState(name, 'failing', 'crashed', { pid: 6123, exit: 'exit status 1', message: s.lastError });
          return json(res, 502, { error: `start ${name}: ${s.lastError}` });
        }
        setState(name, verb === 'stop' ? 'stopped' : 'running', verb === 'stop' ? 'stopped' : 'ready');
        return json(res, 200, view(name, s));
      }
      if (m === 'POST' && verb === 'uninstall') {
        delete st.servers[name];
        emit('config', {});
        return json(res, 200, {});
      }
    }
    if (m === 'GET' && p === '/history') {
      const all = filterCalls(q);
      const from = q.get('cursor') ? Number(Buffer.from(q.get('cursor'), 'base64url').toString()) : 0;
      if (!Number.isFinite(from)) return json(res, 400, { error: 'invalid cursor: use the "next" of a previous page' });
      const limit = Number(q.get('limit') ?? 100);
      const page = all.slice(from, from + limit);
      return json(res, 200, { calls: page, next: from + limit < all.length ? Buffer.from(String(from + limit)).toString('base64url') : undefined });
    }
    if (m === 'GET' && p === '/history/export') {
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson', 'Content-Disposition': 'attachment; filename="switchboard-history.jsonl"' });
      res.end(filterCalls(q).map((c) => JSON.stringify(c)).join('\n'));
      return;
    }
    if ((r = /^\/history\/(\d+)$/.exec(p))) {
      const c = st.calls.find((x) => x.id === Number(r[1]));
      if (!c) return json(res, 404, { error: `no call ${r[1]} in the history` });
      if (c.arguments) return json(res, 200, c);
      if (c.outcome === 'protocol_error') return json(res, 200, { ...c, arguments: { message: 'hello from the e2e walk' } });
      return json(res, 200, { ...c, arguments: c.tool === 'add' ? { a: 2, b: 3 } : { message: 'hello from the e2e walk', apiKey: '[redacted]' }, responsePreview: JSON.stringify({ content: [{ type: 'text', text: c.tool === 'add' ? 'The sum of 2 and 3 is 5.' : 'Echo: hello from the e2e walk' }] }) });
    }
    // Try a tool: the schema as a client gets it, and a call recorded as the dashboard's.
    if ((r = /^\/servers\/([^/]+)\/tools\/([^/]+)(\/call)?$/.exec(p))) {
      const [server, tool] = [decodeURIComponent(r[1]), decodeURIComponent(r[2])];
      const t = st.servers[server]?.tools?.find((x) => x.name === tool);
      if (!st.servers[server]) return json(res, 404, { error: `no server "${server}" in the config` });
      if (!t) return json(res, 404, { error: `"${server}" offers no tool "${tool}" to its clients (not listed, disabled or held until approved)` });
      const schema = tool === 'echo' ? { type: 'object', properties: { message: { type: 'string', description: 'Message to echo' }, apiKey: { type: 'string', description: 'a secret' } }, required: ['message'] }
        : tool === 'add' ? { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }
        : { type: 'object', properties: {} };
      if (m === 'GET' && !r[3]) return json(res, 200, { server, name: tool, description: t.description, inputSchema: schema });
      if (m === 'POST' && r[3]) {
        const b = (await body(req)) ?? {};
        const args = b.arguments ?? {};
        const result = tool === 'add' ? { content: [{ type: 'text', text: `The sum of ${args.a} and ${args.b} is ${args.a + args.b}.` }], structuredContent: { sum: args.a + args.b } }
          : tool === 'echo' ? { content: [{ type: 'text', text: `Echo: ${args.message}` }] }
          : tool === 'getTinyImage' ? { content: [{ type: 'text', text: 'This is a tiny image:' }, { type: 'image', data: gradientPNG(), mimeType: 'image/png' }] }
          : { isError: true, content: [{ type: 'text', text: `${tool} failed: the fake fails every other tool` }] };
        const c = { id: st.nextCall++, start: new Date().toISOString(), duration: 3e6, clientLabel: 'dashboard', clientName: 'dashboard', clientVersion: 'dev', session: 'try', endpoint: server, server, method: 'tools/call', name: tool, tool, outcome: result.isError ? 'tool_error' : 'ok', responseSize: JSON.stringify(result).length,
          arguments: Object.fromEntries(Object.entries(args).map(([k, v]) => [k, /key|token|secret/i.test(k) ? '[redacted]' : v])), responsePreview: JSON.stringify(result) };
        st.calls.unshift(c);
        emit('call', c);
        return json(res, 200, { server, tool, result, duration: 3e6, session: 'try' });
      }
    }
    if (m === 'GET' && p === '/lifecycle') {
      const server = q.get('server') ?? '';
      const names = server ? [server] : Object.keys(st.servers);
      return json(res, 200, names.map((n, i) => ({ id: i + 1, time: new Date(Date.now() - 60_000).toISOString(), server: n, kind: 'ready', pid: 5000 + i })));
    }
    if (m === 'GET' && p === '/stats') {
      const calls = filterCalls(new URLSearchParams({ since: q.get('since') ?? '24h' }));
      const by = q.get('by');
      if (by === 'time') {
        // As the daemon: buckets of step on multiples of step since the epoch, empty ones included.
        const m2 = /^(\d+)(s|m|h)$/.exec(q.get('step') ?? '1m');
        const step = m2 ? Number(m2[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[m2[2]] : 60_000;
        const origin = Math.floor(since(q.get('since') ?? '24h') / step) * step;
        const out = [];
        for (let t = origin; t < Date.now(); t += step) {
          const cs = calls.filter((c) => Date.parse(c.start) >= t && Date.parse(c.start) < t + step);
          const d = cs.map((c) => c.duration).sort((a, b) => a - b);
          out.push({ time: new Date(t).toISOString(), count: cs.length, errors: cs.filter((c) => c.outcome !== 'ok').length,
            p50: d.length ? d[Math.ceil(d.length * 0.5) - 1] : 0, p95: d.length ? d[Math.ceil(d.length * 0.95) - 1] : 0 });
        }
        return json(res, 200, out);
      }
      return json(res, 200, stats(calls, by === 'tool' ? (c) => ({ server: c.server, tool: c.name }) : (c) => ({ server: c.server })));
    }
    if (m === 'GET' && p === '/usage') {
      const from = since(q.get('since') ?? '1h');
      const span = Date.now() - from;
      const step = Math.max(2000, Math.floor(span / 240));
      const out = [];
      for (let t = from; t <= Date.now(); t += step) {
        const k = (t / step) % 60;
        out.push({ time: new Date(t).toISOString(), server: 'everything', cpuPercent: 2 + 1.5 * Math.sin(k / 5), rssBytes: Math.round((82 + 6 * Math.sin(k / 9)) * 1048576), processes: 2 });
        if (t < Date.now() - span / 3) out.push({ time: new Date(t).toISOString(), server: 'time', cpuPercent: 0.6 + 0.4 * Math.cos(k / 4), rssBytes: Math.round((31 + 2 * Math.cos(k / 7)) * 1048576), processes: 1 });
      }
      return json(res, 200, out);
    }
    if (m === 'GET' && p === '/clients') return json(res, 200, Object.values(st.clients));
    if (m === 'GET' && p === '/profiles') return json(res, 200, st.profiles.map(profileView));
    if (m === 'PUT' && (r = /^\/profiles\/([^/]+)\/ask-before-destructive$/.exec(p))) {
      const prof = st.profiles.find((x) => x.name === decodeURIComponent(r[1]));
      if (!prof) return json(res, 404, { error: `no profile "${decodeURIComponent(r[1])}" in config.json` });
      const b = await body(req);
      prof.askBeforeDestructive = !!b?.enabled || undefined;
      emit('config', {});
      return json(res, 200, { enabled: !!b?.enabled });
    }
    if ((m === 'POST' && p === '/profiles') || (r = /^\/profiles\/([^/]+)$/.exec(p))) {
      // As app/api/profiles.go: the errors name the request's field; a
      // profile a client is bound to is not deleted.
      const name = r ? decodeURIComponent(r[1]) : undefined;
      const i = name === undefined ? -1 : st.profiles.findIndex((x) => x.name === name);
      if (name !== undefined && i < 0) return json(res, 404, { error: `unknown profile "${name}": the profiles are ${st.profiles.map((x) => x.name).join(', ')}` });
      if (m === 'DELETE') {
        const bound = boundTo(name);
        if (bound.length) return json(res, 409, { error: `profile "${name}" is in use by ${bound.join(', ')}: connect it to /mcp or another profile first` });
        st.profiles.splice(i, 1);
        emit('config', {});
        res.writeHead(204).end();
        return;
      }
      const b = await body(req);
      if (!b) return json(res, 400, { error: 'invalid request body' });
      const pname = name ?? b.name;
      if (!pname) return json(res, 400, { error: 'invalid profile: name: missing: give the profile a name, like "coding"' });
      if (name === undefined && st.profiles.some((x) => x.name === pname)) return json(res, 409, { error: `profile "${pname}" already exists; change it with PUT /api/v1/profiles/${pname}` });
      if (!b.servers?.length) return json(res, 400, { error: 'invalid profile: servers: missing: a profile needs at least one server' });
      const unknown = b.servers.findIndex((x) => !st.servers[x]);
      if (unknown >= 0) return json(res, 400, { error: `invalid profile: servers[${unknown}]: unknown server "${b.servers[unknown]}"` });
      // As the daemon's PUT: asking first (its own route) is kept.
      const prof = { name: pname, endpoint: `/mcp/p/${pname}`, servers: b.servers, tools: b.tools, toolSearch: b.toolSearch || undefined, maxTier: b.maxTier || undefined, askBeforeDestructive: (i >= 0 && st.profiles[i].askBeforeDestructive) || undefined };
      if (i >= 0) st.profiles[i] = prof;
      else st.profiles.push(prof);
      emit('config', {});
      return json(res, name === undefined ? 201 : 200, profileView(prof));
    }
    if ((r = /^\/clients\/([^/]+)\/(plan|apply|import|restore|backups)$/.exec(p))) {
      const c = st.clients[r[1]];
      if (!c) return json(res, 404, { error: `unknown client "${r[1]}"` });
      if (r[2] === 'backups') return json(res, 200, st.backups[c.id] ?? []);
      const b = await body(req);
      const action = r[2] === 'plan' ? b.action : r[2] === 'apply' ? b.action : r[2];
      const hash = `h-${c.id}-${c.connected}`;
      const diff =
        action === 'disconnect'
          ? DIFF(c.path, '-    "switchboard": {\n-      "url": "http://127.0.0.1:7777/mcp",\n-      "headers": { "Authorization": "Bearer ••••••" }\n-    }')
          : action === 'import'
            ? DIFF(c.path, b.replace ? '-    "sqlite": { "command": "uvx", "args": ["mcp-server-sqlite"] }\n+    "switchboard": { "url": "http://127.0.0.1:7777/mcp" }' : ' ')
            : c.connected && (c.profile ?? '') !== (b.profile ?? '')
              ? DIFF(c.path, `     "switchboard": {\n-      "url": "http://127.0.0.1:7777/mcp${c.profile ? `/p/${c.profile}` : ''}",\n+      "url": "http://127.0.0.1:7777/mcp${b.profile ? `/p/${b.profile}` : ''}",\n       "headers": { "Authorization": "Bearer ••••••" }\n     }`)
              : DIFF(c.path, `     "sqlite": { "command": "uvx", "args": ["mcp-server-sqlite"] },\n+    "switchboard": {\n+      "url": "http://127.0.0.1:7777/mcp${b.profile ? `/p/${b.profile}` : ''}",\n+      "headers": { "Authorization": "Bearer ••••••" }\n+    }`);
      if (r[2] === 'plan') {
        const moved = action === 'connect' && c.connected && (c.profile ?? '') !== (b.profile ?? '');
        const plan = { client: c.id, path: c.path, hash, diff, changed: !(action === 'connect' && c.connected) || moved, ...(moved ? { rebind: true } : {}) };
        if (action === 'connect') {
          // As app/api/clients.go's planToolCount: what the endpoint lists
          // (search mode: its two tools), against the client's limit.
          const prof = b.profile ? st.profiles.find((x) => x.name === b.profile) : undefined;
          const tools = prof ? profileView(prof).toolCount : st.settings.toolSearch ? 2 : 48;
          const where = prof ? `profile "${prof.name}"` : '/mcp';
          Object.assign(plan, { tools, toolLimit: c.toolLimit, toolLimitSource: c.toolLimitSource });
          if (c.toolLimit && tools > c.toolLimit) plan.toolWarning = `${c.name} would see ${tools} tools on ${where}, more than the ${c.toolLimit} it takes`;
        }
        return json(res, 200, plan);
      }
      if (b.hash !== hash) return json(res, 409, { error: `${c.path} changed since the plan was shown; look at the new plan first` });
      if (action === 'connect') {
        c.connected = true;
        const prof = st.profiles.find((x) => x.name === b.profile);
        c.profile = prof?.name;
        const t = st.tokens.find((x) => x.label === c.id);
        if (t) t.profile = prof?.name;
        else st.tokens.push({ id: `t-${c.id}`, label: c.id, scope: 'client', profile: prof?.name, created: new Date().toISOString() });
        c.tools = prof ? profileView(prof).toolCount : 48;
        c.warning = c.toolLimit && c.tools > c.toolLimit ? `${c.name} sees ${c.tools} tools on /mcp, more than the ${c.toolLimit} it takes` : undefined;
      }
      if (action === 'disconnect') c.connected = false;
      if (action === 'import') {
        for (const e of c.servers) if (!e.Name.startsWith('switchboard') && !st.servers[e.Name]) st.servers[e.Name] = { config: { command: e.Command, args: e.Args }, state: 'stopped', restarts: 0, processes: [] };
        emit('config', {});
      }
      if (c.connected) {
        const url = `http://127.0.0.1:7777/mcp${c.profile ? `/p/${c.profile}` : ''}`;
        c.servers = [...c.servers.filter((e) => e.Name !== 'switchboard'), { Name: 'switchboard', URL: url, Headers: { Authorization: '••••••' } }];
      }
      if (!c.connected) c.servers = c.servers.filter((e) => e.Name !== 'switchboard');
      return json(res, 200, c);
    }
    if (m === 'GET' && p === '/catalog') {
      const t = (q.get('q') ?? '').toLowerCase();
      if (st.registryOffline) {
        return json(res, 200, { entries: st.catalog.filter((e) => e.source === 'embedded' && (!t || `${e.name} ${e.title} ${e.description}`.toLowerCase().includes(t))), source: 'embedded',
          warning: 'registry unreachable: Get "https://registry.modelcontextprotocol.io/v0/servers?limit=100": dial tcp: lookup registry.modelcontextprotocol.io: no such host; no cached registry results, showing the built-in catalog only' });
      }
      return json(res, 200, { entries: st.catalog.filter((e) => !t || `${e.name} ${e.title} ${e.description}`.toLowerCase().includes(t)), source: 'registry', warning: '' });
    }
    if ((r = /^\/catalog\/(.+)$/.exec(p))) {
      const e = st.catalog.find((x) => x.name === decodeURIComponent(r[1]));
      return e ? json(res, 200, e) : json(res, 404, { error: `no catalog entry "${decodeURIComponent(r[1])}"` });
    }
    if (m === 'POST' && p === '/installs') {
      const b = await body(req);
      const e = st.catalog.find((x) => x.name === b?.entry);
      if (!e) return json(res, 404, { error: `no catalog entry "${b?.entry}"` });
      if (st.servers[b.server]) return json(res, 409, { error: `server "${b.server}" already exists` });
      const id = `inst-${Date.now().toString(36)}`;
      if (b.remote || e.kind === 'remote') {
        // As app/api/install_remote.go: resolve, configure (the secret
        // headers to the store), verify (the first connect, which asks
        // for a sign-in).
        const r = e.remotes[0];
        const missing = Object.entries(r.variables ?? {}).find(([k, v]) => v.isRequired && !b.values?.[k]) ?? (r.headers ?? []).map((h) => [h.name, h]).find(([k, h]) => h.isRequired && !b.values?.[k]);
        if (missing) return json(res, 400, { error: `invalid inputs for ${e.name}: input ${missing[0]}: required, but no value was given` });
        const url = r.url.replace(/\{(\w+)\}/g, (_, k) => b.values[k]);
        const secrets = (r.headers ?? []).filter((h) => h.isSecret && b.values?.[h.name]).map((h) => h.name);
        const notice = `it needs a sign-in (needs sign-in: first use): run \`switchboard auth login ${b.server}\``;
        const steps = [['resolve', `remote streamable-http at ${url}; secret headers ${secrets.join(', ')}`], ['configure', `storing ${secrets.length} secret headers and adding ${b.server} to config.json`], ['verify', `connecting to ${url}`]];
        steps.forEach(([phase, line], i) => setTimeout(() => emit('install', { id, server: b.server, phase, line }), 300 + i * 350));
        setTimeout(() => {
          st.servers[b.server] = { config: { url, transport: r.type, secretHeaders: Object.fromEntries(secrets.map((h) => [h, h])), install: { entry: e.name, version: e.version, type: 'remote' } },
            state: 'failing', restarts: 0, processes: [], lastError: `remote server "${b.server}" needs sign-in (first use)`, auth: { state: 'needs sign-in', reason: 'first use', since: new Date().toISOString() } };
          emit('config', {});
          emit('install', { id, server: b.server, phase: 'verify', done: true, line: `installed ${b.server}, remote at ${url}: ${notice}`, notice });
        }, 300 + steps.length * 350 + 200);
        return json(res, 202, { id, server: b.server, entry: e.name, remote: true });
      }
      const pkg = e.packages[0];
      if (b.server.startsWith('offline-')) {
        // A download failure on demand (the walk's failed install): npm
        // cannot reach its registry. As the daemon: the output lines, then
        // the error naming its phase, on the phase it failed in.
        const out = ['npm error code ENOTFOUND', 'npm error network request to https://registry.npmjs.org/ failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org'];
        const error = `installing ${b.server} failed during download: npm install ${pkg.identifier}@${pkg.version}: exit status 1\nlast output:\n  ${out.join('\n  ')}`;
        const lines = [['resolve', `resolving ${pkg.identifier}@${pkg.version}`], ['download', `npm install ${pkg.identifier}@${pkg.version}`], ...out.map((l) => ['download', l])];
        lines.forEach(([phase, line], i) => setTimeout(() => emit('install', { id, server: b.server, phase, line }), 300 + i * 200));
        setTimeout(() => emit('install', { id, server: b.server, phase: 'download', done: true, error, line: `install failed: ${error}` }), 300 + lines.length * 200 + 100);
        return json(res, 202, { id });
      }
      const steps = [
        ['resolve', `resolving ${pkg.identifier}@${pkg.version}`],
        ['download', `npm install ${pkg.identifier}@${pkg.version}`],
        ['download', 'added 87 packages in 2s'],
        ['install', `wrote servers/${b.server}/package.json`],
        ['verify', 'starting the server and listing its tools'],
      ];
      steps.forEach(([phase, line], i) => setTimeout(() => emit('install', { id, server: b.server, phase, line }), 300 + i * 350));
      // The tools it verified: Memory's for Memory, Brave's for the rest.
      const tools = pkg.identifier.endsWith('server-memory')
        ? [{ name: 'create_entities', description: 'Create entities in the knowledge graph' }, { name: 'search_nodes', description: 'Search the graph' }, { name: 'read_graph', description: 'Read the whole graph' }]
        : [{ name: 'brave_web_search', description: 'Search the web' }, { name: 'brave_local_search', description: 'Search local businesses' }];
      setTimeout(() => {
        st.servers[b.server] = { config: { command: 'node', args: [`servers/${b.server}/node_modules/.bin/${pkg.identifier.split('/').pop()}`] }, state: 'running', restarts: 0, tools, processes: [{ pid: 7777, state: 'ready', started: new Date().toISOString(), inFlight: 0, leased: false }], usage: { cpuPercent: 1, rssBytes: 60 * 1048576, processes: 1 } };
        emit('install', { id, server: b.server, phase: 'verify', done: true, tools: tools.map((t) => t.name) });
        emit('config', {});
      }, 300 + steps.length * 350 + 200);
      return json(res, 202, { id });
    }
    if ((r = /^\/installs\/([^/]+)\/cancel$/.exec(p))) return json(res, 200, {});
    if (m === 'POST' && p === '/paths/check') {
      // As app/api/paths.go (install.CheckPath) over the fake's own disk.
      const b = await body(req);
      if (!b?.path) return json(res, 400, { error: 'path is required' });
      const kind = b.kind || 'filepath';
      const isDir = FAKE_DIRS.includes(b.path);
      const exists = isDir || FAKE_FILES.includes(b.path);
      const parent = b.path.replace(/\/[^/]*$/, '') || '/';
      let error;
      if (!b.path.startsWith('/')) error = `"${b.path}" is not an absolute path`;
      else if (kind === 'directory' && !exists) error = `path "${b.path}" does not exist: no such file or directory`;
      else if (kind === 'directory' && !isDir) error = `"${b.path}" is not a directory`;
      else if (!exists && !FAKE_DIRS.includes(parent)) error = `path "${b.path}" does not exist, and neither does its folder ${parent}`;
      return json(res, 200, { exists, isDir, ...(error ? { error } : {}) });
    }
    if (m === 'GET' && p === '/tokens') return json(res, 200, st.tokens);
    if (m === 'GET' && p === '/held-tools') return json(res, 200, []);
    if (m === 'GET' && p === '/asks') return json(res, 200, []);
    if ((r = /^\/tokens\/([^/]+)$/.exec(p)) && m === 'DELETE') {
      const label = decodeURIComponent(r[1]);
      if (!st.tokens.some((t) => t.label === label)) return json(res, 404, { error: `no token "${label}"` });
      st.tokens = st.tokens.filter((t) => t.label !== label);
      res.writeHead(204).end();
      return;
    }
    if (p === '/settings' && m === 'GET') return json(res, 200, st.settings);
    if (p === '/settings' && m === 'PUT') {
      const b = await body(req);
      if (b?.retention?.maxAge && !/^\d+h$|^0s$/.test(b.retention.maxAge)) return json(res, 400, { error: `invalid retention.maxAge "${b.retention.maxAge}"` });
      // As the daemon: a setting the PUT leaves out keeps its value.
      st.settings = { ...st.settings, ...b, retention: { ...st.settings.retention, ...b?.retention } };
      return json(res, 200, st.settings);
    }
    return json(res, 404, { error: `no such endpoint: ${m} ${url.pathname}` });
  }

  async function serveFile(res, path) {
    const root = resolve(dist);
    let file = normalize(join(root, path));
    if (!file.startsWith(root)) file = join(root, 'index.html');
    try {
      if (!(await stat(file)).isFile()) throw new Error('not a file');
    } catch {
      file = join(root, 'index.html');
    }
    try {
      const data = await readFile(file);
      res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(data);
    } catch {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end('no dashboard build: run npm run build');
    }
  }

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, `http://${req.headers.host}`);
    if (url.pathname === '/login') {
      if (url.searchParams.get('code') !== CODE) return json(res, 403, { error: 'invalid or used login code' });
      res.writeHead(303, { Location: '/', 'Set-Cookie': `${COOKIE}=${SESSION}; Path=/; HttpOnly; SameSite=Strict` });
      return res.end();
    }
    if (url.pathname.startsWith('/api/')) {
      const cookie = req.headers.cookie ?? '';
      if (!cookie.split(/;\s*/).includes(`${COOKIE}=${SESSION}`)) return json(res, 401, { error: 'not logged in' });
      if (req.headers.origin && req.headers.origin !== `http://${req.headers.host}`) return json(res, 403, { error: 'foreign origin' });
      try {
        return await api(req, res, url);
      } catch (err) {
        return json(res, 500, { error: String(err) });
      }
    }
    return serveFile(res, url.pathname === '/' ? 'index.html' : url.pathname);
  });

  return new Promise((ok) => {
    server.listen(port, '127.0.0.1', () => {
      const addr = server.address();
      ok({
        url: `http://127.0.0.1:${addr.port}`,
        loginPath: `/login?code=${CODE}`,
        // The walk cuts the fake's registry: the catalog then answers as
        // the daemon does without DNS (the built-in entries, a warning).
        setRegistryOffline: (on) => (st.registryOffline = on),
        // The walk's first run: no server until one is installed, then
        // the fake's own come back beside it.
        setFirstRun: (on) => {
          if (on) [st.stash, st.servers] = [st.servers, {}];
          else [st.servers, st.stash] = [{ ...st.stash, ...st.servers }, undefined];
          emit('config', {});
        },
        close: () =>
          new Promise((done) => {
            clearInterval(timer);
            clearInterval(keepAlive);
            for (const r of streams) r.end();
            server.close(() => done());
            server.closeAllConnections?.();
          }),
      });
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name, def) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : def;
  };
  const srv = await startFakeApi({ port: Number(arg('port', 0)), dist: arg('dist', undefined) ?? resolve(fileURLToPath(new URL('../dist', import.meta.url))) });
  console.log(`listening ${srv.url} (log in at ${srv.url}${srv.loginPath})`);
  const stop = () => srv.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
