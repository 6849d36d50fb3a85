// Mirrors of the daemon's JSON (the API's contract, app/api/wire).

export interface Status {
  version: string;
  pid: number;
  home: string;
  configFile: string;
  configProblem?: string;
  listen: string;
  started: string;
  servers: number;
  running: number;
}

export interface Usage {
  cpuPercent: number;
  rssBytes: number;
  processes: number;
}

export interface ProcessStatus {
  pid: number;
  state: string;
  started: string;
  inFlight: number;
  leased: boolean;
  serverInfo?: string;
  protocol?: string;
  /** How a remote server's connection was made; absent for a process. */
  transport?: string;
  usage?: Usage;
  /** What the confining launcher reported for this process; absent for an unconfined server. */
  confinement?: Confinement;
}

/** Whether a process runs under its sandbox policy (wire.Confinement). */
export interface Confinement {
  enforced: boolean;
  mechanism?: string;
  reason?: string;
  missing?: string[];
}

/** A server's confinement as it runs (wire.Sandbox). */
export interface Sandbox {
  /** The config runs the server confined. */
  confined: boolean;
  read?: string[];
  write?: string[];
  network: boolean;
  /** TCP ports it may not connect to even with network (Switchboard's own). */
  denyPorts?: number[];
  /** The policy is in force in the server's last process. */
  enforced: boolean;
  mechanism?: string;
  /** Why the server runs unconfined. */
  reason?: string;
  /** What the kernel cannot enforce of the policy. */
  missing?: string[];
}

export interface LogLine {
  time: string;
  pid: number;
  stream: string;
  text: string;
  server?: string;
}

export interface ServerConfig {
  /** A local server's program; a remote server has url instead. */
  command?: string;
  /** A remote server's MCP endpoint. */
  url?: string;
  transport?: 'auto' | 'streamable-http' | 'sse';
  headers?: Record<string, string>;
  /** Header → the name of its secret in the secret store. */
  secretHeaders?: Record<string, string>;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  enabled?: boolean;
  pool?: { mode?: string; min?: number; max?: number; idleTimeout?: string; [k: string]: unknown };
  timeout?: string;
  disabledTools?: string[];
  /** Overrides of tools' tiers, by the server's own tool names. */
  tiers?: Record<string, Tier>;
  /** A call of one of the server's destructive tools waits for the user's yes. */
  askBeforeDestructive?: boolean;
  alias?: string;
  /** Where a catalog install came from (config.json's "install"). */
  install?: { entry: string; version?: string; type?: string };
  /** How a remote server's sign-in identifies Switchboard; absent: dynamic registration. */
  oauth?: { clientId?: string; clientSecret?: string; [k: string]: unknown };
  /** false: the server's new and changed tools are approved without holding them; absent: true. */
  holdChangedTools?: boolean;
  /** Environment variables whose values live in the secret store. */
  secretEnv?: string[];
  /** The directories the server is told about when it asks for roots outside of a client's call. */
  roots?: string[];
  /** config.json's "sandbox": false, true or {read, write, network} (ServerView.sandbox is the policy in force). */
  sandbox?: boolean | { read?: string[]; write?: string[]; network?: boolean };
  [k: string]: unknown;
}

/** One version of a held tool: its title, description, schemas and annotations. */
export interface ToolVersion {
  fingerprint: string;
  title?: string;
  description: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
  time: string;
  how?: string;
}

/** One hit of the scan of what a server lists, on one field of a held tool. */
export interface Finding {
  severity: 'low' | 'medium' | 'high';
  rule: string;
  field: string;
  /** Byte offsets of the span in the field's text; quote is that span. */
  start: number;
  end: number;
  quote: string;
  message: string;
  /** The finding as the command line prints it. */
  line: string;
}

/** A tool held from clients until the user approves it (GET /api/v1/held-tools). */
export interface HeldTool {
  server: string;
  /** What is held: a tool, a prompt, or a resource template (tool is then its URI template). */
  kind?: 'tool' | 'prompt' | 'template';
  tool: string;
  /** 'new', or the names of the fields that changed joined ("description and schema", "title, schema and annotations"). */
  change: string;
  reason: string;
  message: string;
  approved?: ToolVersion;
  listed: ToolVersion;
  /** A unified diff from the approved title, description, schemas and annotations to the listed ones. */
  diff: string;
  /** What the scan found in the listed version, every severity (only a high one holds a tool by itself). */
  findings?: Finding[];
}

/** The data of an "approval" event. */
export interface ApprovalEvent {
  server: string;
  tool: string;
  state: 'held' | 'approved';
  change?: string;
  message: string;
}

/** A tool a server offers (ServerView.tools). */
export interface ToolInfo {
  name: string;
  title?: string;
  description?: string;
  /** Held from clients until approved: new, or changed since approved. */
  held?: boolean;
  /** What the tool may do: the config's override (ServerConfig.tiers), else its annotations (none: destructive, as the MCP spec's defaults say). */
  tier?: Tier;
  /** The server's config hides the tool from clients (ServerConfig.disabledTools). */
  disabled?: boolean;
}

/** A tool's tier, from the least to the most it may do. */
export type Tier = 'read' | 'write' | 'destructive';

export interface ServerView {
  name: string;
  config: ServerConfig;
  enabled: boolean;
  state: string;
  mode: string;
  processes: ProcessStatus[];
  restarts: number;
  lastError?: string;
  usage?: Usage;
  /** Lines the server wrote on stdout that were not MCP messages. */
  nonProtocolLines?: number;
  recentLogs: LogLine[];
  /** Not in the API yet: the tools the server listed (disabled ones included). */
  tools?: ToolInfo[];
  /** The tools come from a listing; false (or absent) before the first: an empty list then means "not known yet". */
  listed?: boolean;
  /** What the server may touch and whether that is in force (absent from older daemons). */
  sandbox?: Sandbox;
  /** A remote server's sign-in (OAuth); absent for one that never asked for a sign-in. */
  auth?: AuthStatus;
}

/** Where a remote server's sign-in stands (wire.AuthStatus). */
export interface AuthStatus {
  /** "needs sign-in", "signing in" or "signed in". */
  state: string;
  /** Why it needs a sign-in: first use, token rejected, refresh refused, scope needed, signed out. */
  reason?: string;
  /** With reason scope needed: the scope asked for. */
  scope?: string;
  /** Why the last sign-in failed (it timed out, the server refused). */
  error?: string;
  /** The link of the sign-in in progress. */
  signInUrl?: string;
  since?: string;
}

/** The data of an "auth" event (wire.AuthEvent): no link, the view has it. */
export interface AuthEvent {
  server: string;
  state: string;
  reason?: string;
  scope?: string;
  error?: string;
}

/** POST /api/v1/servers/{name}/login (wire.LoginResult). */
export interface LoginResult {
  server: string;
  signInUrl?: string;
  browserOpened: boolean;
  auth: AuthStatus;
}

/** POST /api/v1/servers/{name}/logout (wire.LogoutResult). */
export interface LogoutResult {
  server: string;
  revoked: boolean;
  revokeError?: string;
  auth: AuthStatus;
}

export interface Call {
  id: number;
  start: string;
  duration: number; // nanoseconds
  clientLabel: string;
  clientName: string;
  clientVersion: string;
  session: string;
  endpoint: string;
  server: string;
  method: string;
  name: string;
  arguments?: unknown;
  outcome: string;
  error?: string;
  responseSize: number;
  responsePreview?: string;
  pid?: number;
  /** The tier of the tool called, when it was a tool call. */
  tier?: Tier;
  /** The tool (prompt, resource URI) as its server calls it, whichever endpoint the call came through; name is what the client called it. */
  tool?: string;
  /** Which part of the name the gateway did not know: "server", "tool", or absent. */
  unknown?: 'server' | 'tool';
  /** Who decided on a call that had to be asked for (a destructive tool's, on a server or profile that asks first): "elicitation", "input_required", "dashboard", "tray", "cli" or "timeout"; absent when it was not asked for. */
  decidedBy?: string;
  /** Whether the call was allowed (with decidedBy). */
  decisionAllowed?: boolean;
  /** When it was decided (with decidedBy). */
  decidedAt?: string;
}

export interface CallPage {
  calls: Call[];
  next?: string;
}

export interface Stat {
  server: string;
  tool?: string;
  count: number;
  errors: number;
  errorRate: number;
  p50: number; // nanoseconds
  p95: number;
}

export interface Sample {
  time: string;
  server: string;
  cpuPercent: number;
  rssBytes: number;
  processes: number;
  span?: number;
}

/** Not in the API yet: GET /api/v1/stats?by=time&bucket=… */
export interface TimeStat {
  time: string;
  count: number;
  errors: number;
  p50: number;
  p95: number;
}

export interface ClientEntry {
  Name: string;
  Command?: string;
  Args?: string[] | null;
  Env?: Record<string, string> | null;
  Cwd?: string;
  URL?: string;
  Headers?: Record<string, string> | null;
  Type?: string;
  URLKey?: string;
  EnvHeaders?: Record<string, string>;
  BearerTokenEnv?: string;
  /** The client's file turns it off: import adds it turned off. */
  Disabled?: boolean;
}

export interface ClientView {
  id: string;
  name: string;
  path?: string;
  installed: boolean;
  /** It has Switchboard's entry, with a token in force. */
  connected: boolean;
  /** It has Switchboard's entry, but its token is revoked (or unknown): every request it makes gets 401; connect it again. */
  tokenRevoked?: boolean;
  servers: ClientEntry[];
  error?: string;
  /** The profile its token is bound to: it reaches /mcp/p/<profile> only. */
  profile?: string;
  /** How many tools its endpoint lists now (absent when not connected). */
  tools?: number;
  /** How many tools the client takes (0 or absent: not known), and where that comes from. */
  toolLimit?: number;
  toolLimitSource?: string;
  /** What is wrong with what it sees: more tools than its limit, an unknown profile. */
  warning?: string;
  /** What to know although its file holds Switchboard's entry (Gemini CLI starts no server in a folder it does not trust). */
  caveat?: string;
  /** It keeps no file Switchboard may edit (Cherry Studio): connecting it offers an install link, confirmed in the app. */
  offer?: boolean;
  /** Its install link was offered; whether the user confirmed it, Switchboard cannot tell. */
  offered?: boolean;
  /** The tier cap of its token ("read" or "write"); absent: none. */
  maxTier?: Tier;
  /** Its file is in a workspace folder: connecting it needs one. */
  needsWorkspace?: boolean;
}

/** POST /api/v1/clients/{id}/offer: the install link of a client that keeps no file. */
export interface ClientOffer {
  client: string;
  /** The deep link, with the client's token in it. */
  link: string;
  /** The entry the link installs, the token masked. */
  entry: string;
  note: string;
  /** Asked to open it, the daemon did; or why it could not. */
  opened?: boolean;
  openError?: string;
}

/** A profile of config.json: a set of servers (and tools) on /mcp/p/<name>. */
export interface ProfileView {
  name: string;
  endpoint: string;
  servers: string[];
  missing?: string[];
  tools?: Record<string, string[]>;
  toolSearch?: boolean;
  /** A call of a destructive tool through the profile's endpoint waits for the user's yes. */
  askBeforeDestructive?: boolean;
  toolCount?: number;
  clients?: string[];
  /** By server: tools `tools` names that the server does not offer (known once it is listed); its endpoint leaves them out. */
  missingTools?: Record<string, string[]>;
  /** The tier cap of its endpoint ("read" or "write"); absent: none. */
  maxTier?: Tier;
  /** How many tools a client reaches through it: those it lists, or in search mode those its two find and call. */
  reachableTools?: number;
}

/** POST /api/v1/profiles (name required) and PUT /api/v1/profiles/{name}. */
export interface ProfileRequest {
  name?: string;
  servers: string[];
  tools?: Record<string, string[]>;
  toolSearch?: boolean;
  maxTier?: string;
}

export interface ClientPlan {
  client: string;
  path: string;
  hash: string;
  diff: string;
  changed: boolean;
  /** Applying deletes the file (connect created it). */
  remove?: boolean;
  /** Entries of Switchboard's names it did not write: apply refuses to replace them without `replace`. */
  conflicts?: { name: string; target: string }[];
  /** Entries of Switchboard's names it did not write, left as they are. */
  kept?: string[];
  notes?: string[];
  /** Applying binds the client's token to another profile (or unbinds it), even when the file does not change. */
  rebind?: boolean;
  /** On connect: how many tools the endpoint it points at lists now, the client's limit, and a warning when over (before the write). */
  tools?: number;
  toolLimit?: number;
  toolLimitSource?: string;
  toolWarning?: string;
  /** On connect: what to know although the file will hold the entry (Gemini CLI's untrusted folders). */
  caveat?: string;
  /** On connect: the client keeps no file; connecting is offering its install link (POST .../offer). */
  offer?: boolean;
}

export interface Backup {
  /** What restore/plan and restore/apply take. */
  name: string;
  path: string;
  size: number;
  absent?: boolean;
  time: string;
}

/** POST /api/v1/clients/{id}/import/plan. */
export interface ImportPlan {
  client: string;
  path: string;
  hash: string;
  replace: boolean;
  /** The change to the client's file (with replace). */
  diff: string;
  changed: boolean;
  servers: { entry: string; name: string; action: 'add' | 'exists'; renamed?: boolean }[];
  skipped: { entry: string; reason: string }[];
}

export interface Input {
  description?: string;
  isRequired?: boolean;
  format?: string;
  value?: string;
  isSecret?: boolean;
  default?: string;
  placeholder?: string;
  choices?: string[];
  /** A file (or folder) in the server's data folder that the value names. */
  dataPath?: string;
}

export interface Argument extends Input {
  type: string;
  name?: string;
  valueHint?: string;
  isRepeated?: boolean;
}

export interface KeyValue extends Input {
  name: string;
}

export interface Package {
  registryType: string;
  registryBaseUrl?: string;
  identifier: string;
  version?: string;
  runtimeHint?: string;
  transport?: { type: string; url?: string };
  runtimeArguments?: Argument[];
  packageArguments?: Argument[];
  environmentVariables?: KeyValue[];
  /** The SHA-256 of an mcpb package's file. */
  fileSha256?: string;
}

/** A hosted endpoint of a catalog entry (server.json remotes[]). */
export interface Remote {
  type: string;
  /** May hold {variables}, each an input of the install. */
  url: string;
  headers?: KeyValue[];
  variables?: Record<string, Input>;
}

export interface CatalogEntry {
  name: string;
  title?: string;
  description: string;
  version: string;
  websiteUrl?: string;
  repository?: { url: string; source?: string; subfolder?: string };
  packages?: Package[];
  remotes?: Remote[];
  /** How it installs: local (a package run here), remote (only a hosted endpoint), both, or none. */
  kind?: 'local' | 'remote' | 'both' | 'none';
  shortName?: string;
  source?: string;
  status?: string;
  /** The server needs the network (only embedded entries say; registry ones are given it). */
  network?: boolean;
  /** The newest version the registry lists, when newer than version. */
  latestVersion?: string;
}

export interface CatalogAnswer {
  entries: CatalogEntry[];
  source: string;
  warning?: string;
  /** When the registry entries shown were fetched. */
  fetchedAt?: string;
  /** There were more matches than the limit. */
  more?: boolean;
}

export interface TokenInfo {
  id?: string;
  label: string;
  /** "admin" (the API and MCP: the CLI, tray, window, dashboard) or "client" (MCP only). */
  scope?: string;
  /** The profile a client's token is bound to; absent: it reaches /mcp. */
  profile?: string;
  /** The tier cap of a client's token ("read" or "write"); absent: none. */
  maxTier?: string;
  created: string;
  lastUsed?: string;
}

/** Not in the API yet: GET/PUT /api/v1/settings. */
export interface Settings {
  retention?: { maxAge?: string; maxBytes?: number };
  startAtLogin?: boolean;
  redactValues?: boolean;
  /** /mcp in search mode: clients see search_tools and call_tool instead of every tool. */
  toolSearch?: boolean;
  /** How long an MCP client session may send nothing before it is closed (a Go duration, "30m"). */
  sessionTimeout?: string;
  /** How long a call that waits for the user's yes waits before it is denied (a Go duration: "2m0s"). */
  askTimeout?: string;
  [k: string]: unknown;
}

// Event payloads of /api/v1/events.
export interface StateEvent {
  server: string;
  time: string;
  kind: string;
  state?: string;
  pid?: number;
  exit?: string;
  message?: string;
  stream?: string;
  /** The backoff before the next start, in nanoseconds. */
  delay?: number;
  usage?: Usage;
}

export interface SampleEvent extends Usage {
  server: string;
  time: string;
}

export interface InstallEvent {
  id: string;
  server?: string;
  phase?: string;
  line?: string;
  /** line is output of the installer (not a step of Switchboard's). */
  output?: boolean;
  percent?: number;
  done?: boolean;
  error?: string;
  tools?: (string | ToolInfo)[];
  /** What the user still has to do after a successful install (a remote that asks for a sign-in). */
  notice?: string;
}

/** GET /api/v1/servers/{name}/tools/{tool}: the tool as its endpoint's clients are given it. */
export interface TryTool {
  server: string;
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
}

/** POST /api/v1/servers/{name}/tools/{tool}/call: what the call answered, as a client got it. */
export interface TryResult {
  server: string;
  tool: string;
  /** The tools/call result (content, structuredContent, isError); absent with error. */
  result?: unknown;
  /** The endpoint's JSON-RPC error instead of a result. */
  error?: string;
  duration: number; // nanoseconds
  session?: string;
}

/** A call of a destructive tool waiting for the user's yes (GET /api/v1/asks, and an "ask" event's). */
export interface Ask {
  id: string;
  server: string;
  /** The tool's own name on its server. */
  tool: string;
  endpoint?: string;
  client?: string;
  tier: string;
  /** Redacted as the history redacts a call's. */
  arguments?: unknown;
  asked: string;
  /** When the ask times out, which denies the call. */
  deadline: string;
}

/** How an ask ended (POST /api/v1/asks/{id}'s answer). */
export interface AskDecision {
  id: string;
  allowed: boolean;
  /** "dashboard", "tray", "cli", "timeout" or "cancelled". */
  by: string;
  at: string;
}

/** The data of an "ask" event. */
export interface AskEvent {
  state: 'pending' | 'decided';
  ask: Ask;
  decision?: AskDecision;
}
