#!/usr/bin/env node
// An independent MCP client for the gateway's tests: the official TypeScript
// SDK's Client, driven by a JSON scenario, printing one JSON report.
//
//   node client.mjs '<scenario JSON>'      or      node client.mjs < scenario.json
//
// Scenario:
//   {
//     "transport": "streamable" | "sse" | "stdio",
//     "url": "http://127.0.0.1:1234/mcp",         // streamable and sse
//     "token": "secret",                          // optional: Authorization: Bearer
//     "headers": {"X-Any": "v"},                  // optional extra HTTP headers
//     "noStandaloneSSE": true,                    // streamable: never open the optional GET stream
//     "headersTimeoutMs": 5000,                   // streamable: HTTP through the undici package's fetch, whose
//                                                 // Agent gives up on a response without headers after this long
//                                                 // (Node's own fetch: 300 s)
//     "command": "node", "args": [...],           // stdio
//     "env": {"K": "V"}, "cwd": "/dir",           // stdio, optional
//     "protocolVersion": "2025-03-26",            // optional: the version initialize asks for
//     "clientInfo": {"name": "...", "version": "..."},
//     "capabilities": {...},                      // optional: replaces the default capabilities
//     "timeoutMs": 20000,                         // per request (default 20 s)
//     "elicitation": {"action": "accept", "content": {...}},  // optional: replaces the elicitation answer
//     "wire": true,                               // also report each step's raw JSON-RPC result
//     "steps": [ {"op": "listTools"}, {"op": "callTool", "name": "echo", "args": {...}}, ... ]
//   }
//
// Ops (each may carry "id" to name it in the report, and "timeoutMs"):
//   listTools, listPrompts, listResources, listResourceTemplates
//                                   {"cursor"?, "all"?: follow every page and merge them into one result}
//   callTool {name, args, meta?, progress?: true (asks for progress; notifications/progress are reported),
//             cancelAfterMs?: N (aborts the call after N ms: the SDK sends notifications/cancelled with the
//             reason "cancelled by the harness", and the step fails with an error carrying it)}
//   getPrompt {name, args}          readResource {uri}
//   complete {ref, argument, context?}    setLoggingLevel {level}    ping
//   subscribe {uri}    unsubscribe {uri}    sendRootsListChanged
//   request {method, params}        (any request, result passed through unparsed)
//   notify {method, params}         (any notification)
//   sleep {ms}                      waitFor {method, count?: 1, timeoutMs?}  (a notification)
//
// The client declares sampling, elicitation and roots (unless "capabilities"
// replaces them) and answers the server deterministically:
//   sampling/createMessage  → {role: "assistant", model: "switchboard-test",
//                              content: {type: "text", text: "sampled: <text of the last message>"}}
//   elicitation/create      → {action: "accept", content: {"answer": "42"}}  (or the scenario's "elicitation")
//   roots/list              → {roots: [{uri: "file:///tmp/root", name: "root"}]}
//
// Report (stdout, one JSON object):
//   {
//     "connected": true, "connectError"?: {...},
//     "protocolVersion" (as the server answered initialize), "serverInfo", "serverCapabilities",
//     "instructions", "sessionId" (streamable HTTP only),
//     "steps": [{"op", "id"?, "ok": true, "result", "wire"?} | {"op", "id"?, "ok": false, "error": {"message", "code"?, "data"?}}],
//     "notifications": [{"method", "params"}],   // everything the server notified, in order
//     "serverRequests": [{"method", "params"}],  // sampling, elicitation, roots asked of the client
//     "closeError"?: {...}
//   }
// The exit status is 0 whenever a report is printed, whatever the steps did;
// it is 2 for harness failures (bad scenario, a bug here), with the reason
// on stderr and, where possible, {"harnessError": "..."} on stdout.

import { Agent, fetch as undiciFetch } from "undici";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ResultSchema,
} from "@modelcontextprotocol/sdk/types.js";

class HarnessError extends Error {}

// The reason a callTool with "cancelAfterMs" gives: the call's error
// message, and the notifications/cancelled's reason.
const CANCEL_REASON = "cancelled by the harness";

const OPS = new Set([
  "listTools", "listPrompts", "listResources", "listResourceTemplates", "callTool", "getPrompt",
  "readResource", "complete", "setLoggingLevel", "ping", "subscribe", "unsubscribe",
  "sendRootsListChanged", "request", "notify", "sleep", "waitFor",
]);

const DEFAULT_CAPABILITIES = {
  sampling: {},
  elicitation: { form: {} },
  roots: { listChanged: true },
};

async function readScenario() {
  let text = process.argv[2];
  if (text === undefined) {
    const chunks = [];
    for await (const chunk of process.stdin) chunks.push(chunk);
    text = Buffer.concat(chunks).toString("utf8");
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new HarnessError(`the scenario is not JSON: ${e.message}`);
  }
}

function errorJSON(e) {
  if (e === null || typeof e !== "object") return { message: String(e) };
  const out = { message: e.message ?? String(e) };
  if (e.code !== undefined) out.code = e.code;
  if (e.data !== undefined) out.data = e.data;
  if (e.name && e.name !== "Error") out.name = e.name;
  return out;
}

function makeTransport(sc) {
  const headers = { ...(sc.headers ?? {}) };
  if (sc.token) headers.Authorization = `Bearer ${sc.token}`;
  switch (sc.transport) {
    case "streamable":
    case "sse": {
      if (!sc.url) throw new HarnessError(`transport ${sc.transport} needs "url"`);
      const url = new URL(sc.url);
      const opts = { requestInit: { headers } };
      let send = fetch;
      if (sc.headersTimeoutMs !== undefined && sc.transport === "streamable") {
        const dispatcher = new Agent({ headersTimeout: sc.headersTimeoutMs });
        send = (input, init) => undiciFetch(input, { ...init, dispatcher });
        opts.fetch = send;
      }
      if (sc.noStandaloneSSE && sc.transport === "streamable") {
        // A client without the optional standalone GET stream: everything
        // the server sends must come on the POST that it relates to.
        opts.fetch = (input, init) =>
          (init?.method ?? "GET") === "GET" ? Promise.resolve(new Response(null, { status: 405 })) : send(input, init);
      }
      return sc.transport === "sse" ? new SSEClientTransport(url, opts) : new StreamableHTTPClientTransport(url, opts);
    }
    case "stdio":
      if (!sc.command) throw new HarnessError(`transport stdio needs "command"`);
      return new StdioClientTransport({
        command: sc.command,
        args: sc.args ?? [],
        env: sc.env,
        cwd: sc.cwd,
        stderr: "ignore",
      });
    default:
      throw new HarnessError(`unknown transport ${JSON.stringify(sc.transport)}: want streamable, sse or stdio`);
  }
}

// tap sees every JSON-RPC message the transport carries, before the SDK
// parses (and possibly strips) it, and can rewrite outgoing ones.
function tap(transport, { onSend, onReceive }) {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => send(onSend(message) ?? message, options);
  let handler;
  const wrapped = (message, extra) => {
    onReceive(message);
    return handler?.(message, extra);
  };
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    enumerable: true,
    get: () => (handler ? wrapped : undefined),
    set: (h) => {
      handler = h;
    },
  });
}

function lastMessageText(params) {
  const messages = params?.messages ?? [];
  const last = messages[messages.length - 1];
  const content = last?.content;
  const parts = Array.isArray(content) ? content : content ? [content] : [];
  return parts
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("");
}

async function main() {
  const sc = await readScenario();
  if (!Array.isArray(sc.steps ?? [])) throw new HarnessError(`"steps" must be a list`);
  for (const step of sc.steps ?? []) {
    if (!OPS.has(step?.op)) throw new HarnessError(`unknown op ${JSON.stringify(step?.op)}`);
  }
  const timeout = sc.timeoutMs ?? 20000;
  const report = { connected: false, steps: [], notifications: [], serverRequests: [] };

  const client = new Client(sc.clientInfo ?? { name: "switchboard-ts-harness", version: "1.0.0" }, {
    capabilities: sc.capabilities ?? DEFAULT_CAPABILITIES,
  });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    report.serverRequests.push({ method: req.method, params: req.params });
    return {
      role: "assistant",
      model: "switchboard-test",
      stopReason: "endTurn",
      content: { type: "text", text: `sampled: ${lastMessageText(req.params)}` },
    };
  });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    report.serverRequests.push({ method: req.method, params: req.params });
    return sc.elicitation ?? { action: "accept", content: { answer: "42" } };
  });
  client.setRequestHandler(ListRootsRequestSchema, async (req) => {
    report.serverRequests.push({ method: req.method, params: req.params ?? {} });
    return { roots: [{ uri: "file:///tmp/root", name: "root" }] };
  });
  const waiters = [];
  client.fallbackNotificationHandler = async (n) => {
    report.notifications.push({ method: n.method, params: n.params ?? {} });
    for (const w of waiters.slice()) w();
  };

  const transport = makeTransport(sc);
  // Requests the current step sent, by JSON-RPC id, and their raw results.
  let current = null;
  let initializeId;
  let initialize;
  tap(transport, {
    onSend(message) {
      if (message.method === "initialize") {
        initializeId = message.id;
        if (sc.protocolVersion) {
          return { ...message, params: { ...message.params, protocolVersion: sc.protocolVersion } };
        }
      }
      if (current && message.id !== undefined && message.method !== undefined) current.ids.add(message.id);
      return undefined;
    },
    onReceive(message) {
      if (initializeId !== undefined && message.id === initializeId && message.method === undefined) {
        initialize = message.result;
      }
      if (current && message.id !== undefined && message.method === undefined && current.ids.has(message.id)) {
        current.wire.push(message.error !== undefined ? { error: message.error } : message.result);
      }
      // Progress is consumed by the SDK's per-request handlers: keep a copy.
      if (message.method === "notifications/progress") {
        report.notifications.push({ method: message.method, params: message.params ?? {} });
        for (const w of waiters.slice()) w();
      }
    },
  });

  try {
    await client.connect(transport, { timeout });
    report.connected = true;
  } catch (e) {
    report.connectError = errorJSON(e);
    await client.close().catch(() => {});
    return report;
  }
  report.protocolVersion = initialize?.protocolVersion ?? null;
  report.serverInfo = client.getServerVersion() ?? null;
  report.serverCapabilities = client.getServerCapabilities() ?? null;
  report.instructions = client.getInstructions() ?? null;
  report.sessionId = transport.sessionId ?? null;

  try {
    for (const step of sc.steps ?? []) {
      const entry = { op: step.op };
      if (step.id !== undefined) entry.id = step.id;
      const opts = { timeout: step.timeoutMs ?? timeout };
      current = { ids: new Set(), wire: [] };
      try {
        entry.result = await runStep(client, step, opts, report, waiters);
        entry.ok = true;
      } catch (e) {
        if (e instanceof HarnessError) throw e;
        entry.ok = false;
        entry.error = errorJSON(e);
      }
      if (sc.wire && current.ids.size > 0) entry.wire = current.wire;
      current = null;
      report.steps.push(entry);
    }
    try {
      // End the session politely (DELETE) where the transport has one.
      if (typeof transport.terminateSession === "function" && transport.sessionId) await transport.terminateSession();
    } catch (e) {
      report.terminateError = errorJSON(e);
    }
  } finally {
    // Also on a harness error: a stdio server must not outlive the harness.
    try {
      // A stdio server need not exit when its stdin closes (server-everything
      // does not), and the SDK then waits 2 s before SIGTERM: send it at once.
      const pid = sc.transport === "stdio" ? transport.pid : null;
      const closing = client.close();
      if (pid) {
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          // already gone
        }
      }
      await closing;
    } catch (e) {
      report.closeError = errorJSON(e);
    }
  }
  return report;
}

async function listAll(client, step, opts, fn) {
  if (!step.all) return fn(step.cursor ? { cursor: step.cursor } : {}, opts);
  // Every page, merged into one result shaped like a single page.
  let merged;
  let cursor = step.cursor;
  for (let pages = 0; pages < 1000; pages++) {
    const page = await fn(cursor ? { cursor } : {}, opts);
    const key = Object.keys(page).find((k) => Array.isArray(page[k]));
    merged = merged ? { ...page, [key]: [...merged[key], ...page[key]] } : page;
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  delete merged.nextCursor;
  return merged;
}

async function runStep(client, step, opts, report, waiters) {
  const need = (field) => {
    if (step[field] === undefined) throw new HarnessError(`step ${step.op} needs "${field}"`);
    return step[field];
  };
  switch (step.op) {
    case "listTools":
      return listAll(client, step, opts, (p, o) => client.listTools(p, o));
    case "listPrompts":
      return listAll(client, step, opts, (p, o) => client.listPrompts(p, o));
    case "listResources":
      return listAll(client, step, opts, (p, o) => client.listResources(p, o));
    case "listResourceTemplates":
      return listAll(client, step, opts, (p, o) => client.listResourceTemplates(p, o));
    case "callTool": {
      const params = { name: need("name"), arguments: step.args ?? {} };
      if (step.meta) params._meta = step.meta;
      const callOpts = { ...opts };
      if (step.progress) {
        // The SDK then sends a progress token (the request's id); the
        // notifications are reported raw, by tap.
        callOpts.onprogress = () => {};
        callOpts.resetTimeoutOnProgress = true;
      }
      if (step.cancelAfterMs !== undefined) {
        // The SDK sends notifications/cancelled for the request when its
        // signal aborts, and fails the call with the abort's reason.
        const abort = new AbortController();
        const timer = setTimeout(() => abort.abort(CANCEL_REASON), step.cancelAfterMs);
        callOpts.signal = abort.signal;
        try {
          return await client.callTool(params, undefined, callOpts);
        } finally {
          clearTimeout(timer);
        }
      }
      return client.callTool(params, undefined, callOpts);
    }
    case "getPrompt":
      return client.getPrompt({ name: need("name"), arguments: step.args ?? {} }, opts);
    case "readResource":
      return client.readResource({ uri: need("uri") }, opts);
    case "complete": {
      const params = { ref: need("ref"), argument: need("argument") };
      if (step.context) params.context = step.context;
      return client.complete(params, opts);
    }
    case "setLoggingLevel":
      return client.setLoggingLevel(need("level"), opts);
    case "ping":
      return client.ping(opts);
    case "subscribe":
      return client.subscribeResource({ uri: need("uri") }, opts);
    case "unsubscribe":
      return client.unsubscribeResource({ uri: need("uri") }, opts);
    case "sendRootsListChanged":
      await client.sendRootsListChanged();
      return {};
    case "request":
      return client.request({ method: need("method"), params: step.params }, ResultSchema, opts);
    case "notify":
      await client.notification({ method: need("method"), params: step.params });
      return {};
    case "sleep":
      await new Promise((r) => setTimeout(r, need("ms")));
      return {};
    case "waitFor": {
      const method = need("method");
      const count = step.count ?? 1;
      const seen = () => report.notifications.filter((n) => n.method === method).length;
      if (seen() >= count) return { count: seen() };
      await new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(check), 1);
          reject(new Error(`timed out after ${opts.timeout} ms waiting for ${count} ${method} (saw ${seen()})`));
        }, opts.timeout);
        const check = () => {
          if (seen() >= count) {
            clearTimeout(timer);
            waiters.splice(waiters.indexOf(check), 1);
            resolve();
          }
        };
        waiters.push(check);
      });
      return { count: seen() };
    }
    default:
      throw new HarnessError(`unknown op ${JSON.stringify(step.op)}`);
  }
}

let exitCode = 0;
try {
  const report = await main();
  process.stdout.write(JSON.stringify(report) + "\n");
} catch (e) {
  exitCode = 2;
  const message = e instanceof HarnessError ? e.message : `harness bug: ${e?.stack ?? e}`;
  process.stderr.write(`client.mjs: ${message}\n`);
  process.stdout.write(JSON.stringify({ harnessError: message }) + "\n");
}
// Open sockets or a child process must not keep the harness alive.
process.exitCode = exitCode;
setTimeout(() => process.exit(exitCode), 100).unref();
