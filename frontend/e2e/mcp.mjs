// A small MCP client for the e2e walk (streamable HTTP, one session per
// openSession), and the burst of calls the walk drives into the History
// page, which runs in a worker thread (see walk.mjs).

import { Agent, request } from 'node:http';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';

// BURST_CONNECTIONS bounds the connections a burst holds to the daemon;
// further calls wait in the client for one of them, as an MCP client's
// calls do (one connection, or a few). fetch's pool has no bound: it
// opens a connection for every call in flight, so when the daemon slowed
// down under load (300 calls/s, each taking a second) the burst held
// about as many connections as the daemon serves at once (MaxConns,
// 1024), and the daemon then closed the newest ones, which had not yet
// presented their token, for the ones after them: "other side closed".
const BURST_CONNECTIONS = 32;

// post sends one POST with node:http (through agent, else a connection of
// its own) and returns its status, headers and body text.
function post(url, headers, body, agent) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'Content-Length': Buffer.byteLength(body) }, agent: agent ?? false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

// openSession opens an MCP session on url as a client would over
// streamable HTTP (initialize, initialized) and returns its tools/call
// (echo by default), with listTools. agent, when given, is the
// connection pool its requests share (see burst).
export async function openSession(url, token, agent) {
  let session = '';
  const send = async (body) => {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${token}` };
    if (session) headers['Mcp-Session-Id'] = session;
    if (session) headers['MCP-Protocol-Version'] = '2025-11-25';
    const res = await post(url, headers, JSON.stringify(body), agent);
    if (res.status < 200 || res.status > 299) throw new Error(`MCP ${body.method}: HTTP ${res.status} ${res.text}`);
    session = res.headers['mcp-session-id'] ?? session;
    const raw = res.text;
    if (!raw) return null;
    const json = (res.headers['content-type'] ?? '').includes('text/event-stream')
      ? raw.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).filter(Boolean).pop()
      : raw;
    const msg = JSON.parse(json);
    if (msg.error) throw new Error(`MCP ${body.method}: ${msg.error.message}`);
    return msg.result;
  };
  await send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'switchboard-e2e', version: '1.0' } } });
  await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  let id = 1;
  // progressToken, when given, asks the server for progress notifications.
  const call = (text, name = 'echo', args = { text }, progressToken) =>
    send({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args, ...(progressToken ? { _meta: { progressToken } } : {}) } });
  call.listTools = async () => (await send({ jsonrpc: '2.0', id: ++id, method: 'tools/list', params: {} })).tools;
  return call;
}

// burst makes rate echo calls a second for seconds, over a few sessions
// sharing BURST_CONNECTIONS kept-alive connections (at most 1024 calls in
// flight, the rest queued in the client), and returns what was sent,
// answered and failed.
export async function burst(url, token, rate, seconds) {
  const agent = new Agent({ keepAlive: true, maxSockets: BURST_CONNECTIONS });
  const calls = await Promise.all([0, 1, 2, 3].map(() => openSession(url, token, agent)));
  const stats = { sent: 0, ok: 0, failed: 0, firstError: '', errors: {}, peakInflight: 0 };
  let inflight = 0;
  const start = Date.now();
  const end = start + seconds * 1000;
  const pending = new Set();
  while (Date.now() < end) {
    const due = Math.floor(((Date.now() - start) / 1000) * rate);
    while (stats.sent < due && inflight < 1024) {
      const n = stats.sent++;
      inflight++;
      stats.peakInflight = Math.max(stats.peakInflight, inflight);
      const t = Date.now();
      const p = calls[n % calls.length](`burst ${n}`)
        .then(() => stats.ok++)
        .catch((e) => {
          stats.failed++;
          const cause = e?.code ? ` (${e.code})` : '';
          stats.firstError ||= `${String(e?.message ?? e)}${cause} after ${Date.now() - t} ms, ${inflight} in flight`;
          stats.errors[cause || String(e?.message ?? e)] = (stats.errors[cause || String(e?.message ?? e)] ?? 0) + 1;
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
  agent.destroy();
  return stats;
}

// As a worker: run the burst of workerData and post its figures.
if (!isMainThread && workerData?.rate) {
  const { url, token, rate, seconds } = workerData;
  parentPort.postMessage(await burst(url, token, rate, seconds));
}
