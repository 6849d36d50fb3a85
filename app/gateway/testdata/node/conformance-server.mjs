// The fixture server the official MCP conformance suite's server scenarios
// expect (@modelcontextprotocol/conformance, `conformance list --server`):
// tools, resources and prompts named test_*, test://…, each answering what
// its scenario checks. Written for Switchboard's tests from the scenarios'
// published requirements, on the official TypeScript SDK's low-level Server,
// over stdio: the gateway runs it as a backend and the suite talks to the
// gateway (../../conformance_test.go), so every check passes through it.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

// A 1×1 red PNG and a short silent WAV (44-byte header, 8 samples).
const png =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const wav = (() => {
  const b = Buffer.alloc(52);
  b.write("RIFF", 0); b.writeUInt32LE(44, 4); b.write("WAVE", 8);
  b.write("fmt ", 12); b.writeUInt32LE(16, 16); b.writeUInt16LE(1, 20); b.writeUInt16LE(1, 22);
  b.writeUInt32LE(8000, 24); b.writeUInt32LE(8000, 28); b.writeUInt16LE(1, 32); b.writeUInt16LE(8, 34);
  b.write("data", 36); b.writeUInt32LE(8, 40); b.fill(128, 44);
  return b.toString("base64");
})();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const noArgs = { type: "object", properties: {} };

const tools = [
  { name: "test_simple_text", description: "Returns simple text", inputSchema: noArgs },
  { name: "test_image_content", description: "Returns an image", inputSchema: noArgs },
  { name: "test_audio_content", description: "Returns audio", inputSchema: noArgs },
  { name: "test_embedded_resource", description: "Returns an embedded resource", inputSchema: noArgs },
  { name: "test_multiple_content_types", description: "Returns text, an image and a resource", inputSchema: noArgs },
  { name: "test_tool_with_logging", description: "Logs three messages while it runs", inputSchema: noArgs },
  { name: "test_error_handling", description: "Always fails", inputSchema: noArgs },
  { name: "test_tool_with_progress", description: "Reports progress 0, 50, 100 of 100", inputSchema: noArgs },
  { name: "test_sampling", description: "Asks the client to sample",
    inputSchema: { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] } },
  { name: "test_elicitation", description: "Asks the client for user input",
    inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] } },
  { name: "test_elicitation_sep1034_defaults", description: "Elicits fields with defaults (SEP-1034)", inputSchema: noArgs },
  { name: "test_elicitation_sep1330_enums", description: "Elicits every kind of enum (SEP-1330)", inputSchema: noArgs },
  // A JSON Schema 2020-12 input schema the gateway must pass on untouched.
  { name: "json_schema_2020_12_tool", description: "Has a JSON Schema 2020-12 input schema",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
      properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
      additionalProperties: false,
    } },
];

const server = new Server({ name: "switchboard-conformance-fixture", version: "1.0.0" }, {
  capabilities: { tools: {}, resources: { subscribe: true }, prompts: {}, logging: {}, completions: {} },
});

const text = (t) => ({ content: [{ type: "text", text: t }] });

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(SetLevelRequestSchema, async () => ({}));
server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
  const args = req.params.arguments ?? {};
  switch (req.params.name) {
    case "test_simple_text":
      return text("This is a simple text response for testing.");
    case "test_image_content":
      return { content: [{ type: "image", data: png, mimeType: "image/png" }] };
    case "test_audio_content":
      return { content: [{ type: "audio", data: wav, mimeType: "audio/wav" }] };
    case "test_embedded_resource":
      return { content: [{ type: "resource", resource: { uri: "test://embedded-resource", mimeType: "text/plain",
        text: "This is an embedded resource content." } }] };
    case "test_multiple_content_types":
      return { content: [
        { type: "text", text: "Multiple content types test:" },
        { type: "image", data: png, mimeType: "image/png" },
        { type: "resource", resource: { uri: "test://mixed-content-resource", mimeType: "application/json",
          text: JSON.stringify({ test: "data", value: 123 }) } },
      ] };
    case "test_tool_with_logging":
      for (const [i, data] of ["Tool execution started", "Tool processing data", "Tool execution completed"].entries()) {
        if (i > 0) await sleep(50);
        await extra.sendNotification({ method: "notifications/message", params: { level: "info", data } });
      }
      return text("Tool with logging executed successfully");
    case "test_error_handling":
      return { isError: true, content: [{ type: "text", text: "This tool intentionally returns an error for testing" }] };
    case "test_tool_with_progress": {
      const token = req.params._meta?.progressToken;
      for (const [i, progress] of [0, 50, 100].entries()) {
        if (i > 0) await sleep(50);
        if (token !== undefined) {
          await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress, total: 100 } });
        }
      }
      return text("Tool with progress executed successfully");
    }
    case "test_sampling": {
      const r = await extra.sendRequest({ method: "sampling/createMessage", params: {
        messages: [{ role: "user", content: { type: "text", text: String(args.prompt) } }], maxTokens: 100 } },
        CreateMessageResultSchema);
      return text(`LLM response: ${r.content?.type === "text" ? r.content.text : JSON.stringify(r.content)}`);
    }
    case "test_elicitation": {
      const r = await extra.sendRequest({ method: "elicitation/create", params: { message: String(args.message),
        requestedSchema: { type: "object", properties: {
          username: { type: "string", description: "User's response" },
          email: { type: "string", description: "User's email address" } }, required: ["username", "email"] } } },
        ElicitResultSchema);
      return text(`User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    }
    case "test_elicitation_sep1034_defaults": {
      const r = await extra.sendRequest({ method: "elicitation/create", params: { message: "Defaults (SEP-1034)",
        requestedSchema: { type: "object", properties: {
          name: { type: "string", description: "User name", default: "John Doe" },
          age: { type: "integer", description: "User age", default: 30 },
          score: { type: "number", description: "User score", default: 95.5 },
          status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
          verified: { type: "boolean", description: "Verification status", default: true } } } } },
        ElicitResultSchema);
      return text(`Elicitation result: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    }
    case "test_elicitation_sep1330_enums": {
      const r = await extra.sendRequest({ method: "elicitation/create", params: { message: "Enums (SEP-1330)",
        requestedSchema: { type: "object", properties: {
          untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
          titledSingle: { type: "string", oneOf: [{ const: "value1", title: "First" }, { const: "value2", title: "Second" }] },
          legacyEnum: { type: "string", enum: ["opt1", "opt2"], enumNames: ["Option One", "Option Two"] },
          untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
          titledMulti: { type: "array", items: { anyOf: [{ const: "value1", title: "First" }, { const: "value2", title: "Second" }] } },
        } } } },
        ElicitResultSchema);
      return text(`Elicitation result: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    }
    default:
      return { isError: true, content: [{ type: "text", text: `unknown tool ${req.params.name}` }] };
  }
});

const resources = [
  { uri: "test://static-text", name: "static-text", description: "A text resource", mimeType: "text/plain" },
  { uri: "test://static-binary", name: "static-binary", description: "A binary resource", mimeType: "image/png" },
  { uri: "test://watched-resource", name: "watched-resource", description: "A resource to subscribe to", mimeType: "text/plain" },
];
server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources }));
server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [
  { uriTemplate: "test://template/{id}/data", name: "template", description: "A templated resource", mimeType: "application/json" },
] }));
server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
  const uri = req.params.uri;
  if (uri === "test://static-text" || uri === "test://watched-resource") {
    return { contents: [{ uri, mimeType: "text/plain", text: "This is the content of the static text resource." }] };
  }
  if (uri === "test://static-binary") {
    return { contents: [{ uri, mimeType: "image/png", blob: png }] };
  }
  const m = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
  if (m) {
    return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify({ id: m[1], templateTest: true }) }] };
  }
  throw new Error(`unknown resource ${uri}`);
});
server.setRequestHandler(SubscribeRequestSchema, async () => ({}));
server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));

const prompts = [
  { name: "test_simple_prompt", description: "A prompt without arguments" },
  { name: "test_prompt_with_arguments", description: "A prompt with arguments",
    arguments: [{ name: "arg1", description: "First argument", required: true }, { name: "arg2", description: "Second argument", required: true }] },
  { name: "test_prompt_with_embedded_resource", description: "A prompt that embeds a resource",
    arguments: [{ name: "resourceUri", description: "The resource to embed", required: true }] },
  { name: "test_prompt_with_image", description: "A prompt with an image" },
];
server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts }));
server.setRequestHandler(GetPromptRequestSchema, async (req) => {
  const args = req.params.arguments ?? {};
  const user = (content) => ({ role: "user", content });
  switch (req.params.name) {
    case "test_simple_prompt":
      return { messages: [user({ type: "text", text: "This is a simple prompt for testing." })] };
    case "test_prompt_with_arguments":
      return { messages: [user({ type: "text", text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` })] };
    case "test_prompt_with_embedded_resource":
      return { messages: [
        user({ type: "resource", resource: { uri: args.resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." } }),
        user({ type: "text", text: "Please process the embedded resource above." }),
      ] };
    case "test_prompt_with_image":
      return { messages: [user({ type: "image", data: png, mimeType: "image/png" }), user({ type: "text", text: "Please analyze the image above." })] };
    default:
      throw new Error(`unknown prompt ${req.params.name}`);
  }
});
server.setRequestHandler(CompleteRequestSchema, async (req) => {
  const value = req.params.argument?.value ?? "";
  const values = ["paris", "park", "party"].filter((v) => v.startsWith(value));
  return { completion: { values, total: values.length, hasMore: false } };
});

await server.connect(new StdioServerTransport());
