// A small MCP client for the e2e walk (streamable HTTP, one session per
// openSession), and the burst of calls the walk drives into the History
// page, which runs in a worker thread (see walk.mjs).

import { isMainThread, parentPort, workerData } from 'node:worker_threads';

// openSession opens an MCP session on url as a client would over
// streamable HTTP (initialize, initialized) and returns its tools/call
// (echo by default), with listTools.
export async function openSession(url, token) {
  let session = '';
  const post = async (body) => {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${token}` };
    if (session) headers['Mcp-Session-Id'] = session;
    if (session) headers['MCP-Protocol-Version'] = '2025-11-25';
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`MCP ${body.method}: HTTP ${res.status} ${await res.text()}`);
    session = res.headers.get('mcp-session-id') ?? session;
    const raw = await res.text();
    if (!raw) return null;
    const json = (res.headers.get('content-type') ?? '').includes('text/event-stream')
      ? raw.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).filter(Boolean).pop()
      : raw;
    const msg = JSON.parse(json);
    if (msg.error) throw new Error(`MCP ${body.method}: ${msg.error.message}`);
    return msg.result;
  };
  await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'switchboard-e2e', version: '1.0' } } });
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  let id = 1;
  // progressToken, when given, asks the server for progress notifications.
  const call = (text, name = 'echo', args = { text }, progressToken) =>
    post({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args, ...(progressToken ? { _meta: { progressToken } } : {}) } });
  call.listTools = async () => (await post({ jsonrpc: '2.0', id: ++id, method: 'tools/list', params: {} })).tools;
  return call;
}

// burst makes rate echo calls a second for seconds, over a few sessions
// (at most 1024 in flight), and returns what was sent, answered and failed.
export async function burst(url, token, rate, seconds) {
  const calls = await Promise.all([0, 1, 2, 3].map(() => openSession(url, token)));
  const stats = { sent: 0, ok: 0, failed: 0, firstError: '' };
  let inflight = 0;
  const start = Date.now();
  const end = start + seconds * 1000;
  const pending = new Set();
  while (Date.now() < end) {
    const due = Math.floor(((Date.now() - start) / 1000) * rate);
    while (stats.sent < due && inflight < 1024) {
      const n = stats.sent++;
      inflight++;
      const p = calls[n % calls.length](`burst ${n}`)
        .then(() => stats.ok++)
        .catch((e) => {
          stats.failed++;
          stats.firstError ||= String(e?.message ?? e);
        })
        .finally(() => {
          inflight--;
          pending.delete(p);
        });
      pending.add(p);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  stats.sendSeconds = (Date.now() - start) / 1000;
  await Promise.all(pending);
  stats.seconds = (Date.now() - start) / 1000;
  return stats;
}

// As a worker: run the burst of workerData and post its figures.
if (!isMainThread && workerData?.rate) {
  const { url, token, rate, seconds } = workerData;
  parentPort.postMessage(await burst(url, token, rate, seconds));
}
