#!/usr/bin/env node
// A minimal stdio MCP server: newline-delimited JSON-RPC on stdin/stdout,
// no dependencies. It answers initialize, ping, tools/list and tools/call.
// Its tools show what it was started with: "echo" always, "argv" returns its
// arguments, and "secret_present" is listed only when API_KEY is set.
"use strict";
const readline = require("readline");

const tools = [
  { name: "echo", description: "Echoes its text.", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
  { name: "argv", description: "Returns the server's arguments.", inputSchema: { type: "object" } },
];
if (process.env.API_KEY) {
  tools.push({ name: "secret_present", description: "API_KEY was set.", inputSchema: { type: "object" } });
}
if (process.env.FIXTURE_FAIL) {
  process.stderr.write("fixture: failing on purpose: " + process.env.FIXTURE_FAIL + "\n");
  process.exit(7);
}
process.stderr.write("fixture server ready\n");

function send(msg) {
  process.stdout.write(JSON.stringify(msg) + "\n");
}

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    send({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
    return;
  }
  if (msg.id === undefined) return; // a notification
  const reply = (result) => send({ jsonrpc: "2.0", id: msg.id, result });
  switch (msg.method) {
    case "initialize":
      reply({
        protocolVersion: (msg.params && msg.params.protocolVersion) || "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "switchboard-fixture-server", version: "1.2.3" },
      });
      break;
    case "ping":
      reply({});
      break;
    case "tools/list":
      reply({ tools });
      break;
    case "tools/call": {
      const p = msg.params || {};
      const args = p.arguments || {};
      let text;
      if (p.name === "echo") text = String(args.text || "");
      else if (p.name === "argv") text = JSON.stringify(process.argv.slice(2));
      else if (p.name === "secret_present" && process.env.API_KEY) text = "yes";
      else {
        send({ jsonrpc: "2.0", id: msg.id, error: { code: -32602, message: "unknown tool " + p.name } });
        return;
      }
      reply({ content: [{ type: "text", text }] });
      break;
    }
    default:
      send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "Method not found: " + msg.method } });
  }
});
rl.on("close", () => process.exit(0));
