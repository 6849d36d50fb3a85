#!/usr/bin/env node
// One raw HTTP POST through the undici package's fetch, for requests the
// TypeScript SDK does not make (the stateless 2026-07-28 era), printing one
// JSON report; see ../../node_test.go.
//
//   node post.mjs '<request JSON>'
//
// Request: {"url", "headers": {...}, "body": "<text>", "headersTimeoutMs": 5000}
//   headersTimeoutMs is the undici Agent's headersTimeout: how long it waits
//   for the response's headers before it gives up (Node's own fetch: 300 s).
// Report: {"status", "contentType", "headersAfterMs", "body", "totalMs"}, or
//   {"error": {"message", "code"?, "cause"?}} when the request failed.
// The exit status is 0 whenever a report is printed.

import { Agent, fetch } from "undici";

const req = JSON.parse(process.argv[2]);
const dispatcher = new Agent({ headersTimeout: req.headersTimeoutMs });
const start = Date.now();
let report;
try {
  const resp = await fetch(req.url, { method: "POST", headers: req.headers, body: req.body, dispatcher });
  const headersAfterMs = Date.now() - start;
  const body = await resp.text();
  report = {
    status: resp.status,
    contentType: resp.headers.get("content-type"),
    headersAfterMs,
    body,
    totalMs: Date.now() - start,
  };
} catch (e) {
  report = { error: { message: e.message, code: e.code ?? e.cause?.code, cause: e.cause?.message } };
}
process.stdout.write(JSON.stringify(report) + "\n");
await dispatcher.close();
