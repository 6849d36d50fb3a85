import { api } from './api';
import type { ServerConfig, ServerView } from './types';
import { TRANSPORTS, urlError, type Transport } from './remote';

const enc = encodeURIComponent;

export function serverAction(name: string, verb: 'start' | 'stop' | 'restart' | 'update'): Promise<ServerView> {
  return api.post<ServerView>(`/api/v1/servers/${enc(name)}/${verb}`);
}

export function uninstallServer(name: string): Promise<unknown> {
  return api.post(`/api/v1/servers/${enc(name)}/uninstall`);
}

export function putConfig(name: string, cfg: ServerConfig): Promise<ServerView> {
  return api.put<ServerView>(`/api/v1/servers/${enc(name)}`, cfg);
}

/** withTool returns cfg with one tool enabled or disabled (disabledTools). */
export function withTool(cfg: ServerConfig, tool: string, enabled: boolean): ServerConfig {
  const set = new Set(cfg.disabledTools ?? []);
  if (enabled) set.delete(tool);
  else set.add(tool);
  const next: ServerConfig = { ...cfg };
  if (set.size) next.disabledTools = [...set].sort();
  else delete next.disabledTools;
  return next;
}

/** parseConfig reads the config editor's text; the error names the problem. */
export function parseConfig(text: string): { config?: ServerConfig; error?: string } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    return { error: `Not valid JSON: ${(err as Error).message}` };
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return { error: 'The config must be a JSON object, like {"command": "npx", "args": [...]}.' };
  const c = v as Record<string, unknown>;
  // A remote server (url) runs no process here; a local one (command) needs its program.
  if (c.url !== undefined) {
    if (typeof c.url !== 'string' || !c.url.trim()) return { error: '"url" must be the remote server\'s MCP endpoint, like "https://mcp.example.com/mcp".' };
    const u = urlError(c.url);
    if (u) return { error: `"url": ${u}` };
    for (const local of ['command', 'args', 'env', 'secretEnv', 'cwd', 'pool'])
      if (c[local] !== undefined) return { error: `A remote server (one with "url") takes no "${local}": it runs no process here.` };
    if (c.transport !== undefined && !TRANSPORTS.includes(c.transport as Transport)) return { error: `"transport" must be ${TRANSPORTS.map((t) => `"${t}"`).join(', ')}.` };
    for (const key of ['headers', 'secretHeaders'])
      if (c[key] !== undefined && !isStringMap(c[key])) return { error: `"${key}" must be an object of string values.` };
  } else if (typeof c.command !== 'string' || !c.command.trim()) return { error: '"command" is required: the program to run (or "url", for a remote server).' };
  if (c.args !== undefined && (!Array.isArray(c.args) || c.args.some((a) => typeof a !== 'string'))) return { error: '"args" must be a list of strings.' };
  if (c.env !== undefined && !isStringMap(c.env))
    return { error: '"env" must be an object of string values.' };
  if (c.enabled !== undefined && typeof c.enabled !== 'boolean') return { error: '"enabled" must be true or false.' };
  if (c.disabledTools !== undefined && (!Array.isArray(c.disabledTools) || c.disabledTools.some((a) => typeof a !== 'string')))
    return { error: '"disabledTools" must be a list of tool names.' };
  return { config: c as ServerConfig };
}

function isStringMap(v: unknown): boolean {
  return !!v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
}
