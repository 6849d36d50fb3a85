// A unified diff split into typed lines for the diff view.
import type { ClientEntry, ClientPlan, ImportPlan } from './types';

export interface DiffLine {
  kind: 'add' | 'del' | 'ctx' | 'hunk' | 'file';
  text: string;
  oldNo?: number;
  newNo?: number;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

export function parseDiff(diff: string): DiffLine[] {
  const out: DiffLine[] = [];
  let o = 0;
  let n = 0;
  const lines = diff.replace(/\n$/, '').split('\n');
  for (const line of lines) {
    if (line === '' && lines.length === 1) break;
    if (line.startsWith('--- ') || line.startsWith('+++ ')) {
      out.push({ kind: 'file', text: line });
      continue;
    }
    const h = HUNK.exec(line);
    if (h) {
      o = Number(h[1]);
      n = Number(h[2]);
      out.push({ kind: 'hunk', text: line });
    } else if (line.startsWith('+')) {
      out.push({ kind: 'add', text: line.slice(1), newNo: n++ });
    } else if (line.startsWith('-')) {
      out.push({ kind: 'del', text: line.slice(1), oldNo: o++ });
    } else if (line.startsWith('\\')) {
      out.push({ kind: 'ctx', text: line });
    } else {
      out.push({ kind: 'ctx', text: line.startsWith(' ') ? line.slice(1) : line, oldNo: o++, newNo: n++ });
    }
  }
  return out;
}

export function diffStats(lines: DiffLine[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of lines) {
    if (l.kind === 'add') added++;
    else if (l.kind === 'del') removed++;
  }
  return { added, removed };
}

/**
 * importAsPlan shows an import plan in the plan dialog: first what
 * Switchboard's own config gains (as a small diff of config.json), then the
 * change to the client's file when the import replaces its servers.
 */
export function importAsPlan(p: ImportPlan, entries: ClientEntry[] = []): ClientPlan {
  // What each server runs, from the client's config as the daemon listed it
  // (credentials in arguments come masked); env values are left out.
  const what = (entry: string) => {
    const e = entries.find((x) => x.Name === entry);
    if (!e) return '';
    const run = e.URL ? e.URL : [e.Command, ...(e.Args ?? [])].filter(Boolean).join(' ');
    const env = Object.keys(e.Env ?? {});
    return `: ${run}${env.length ? ` (env: ${env.join(', ')})` : ''}`;
  };
  const added = p.servers.filter((s) => s.action === 'add');
  const lines: string[] = ['--- Switchboard config.json', '+++ Switchboard config.json (after the import)'];
  if (added.length || p.servers.length || p.skipped.length) lines.push(`@@ -1,${p.servers.length} +1,${p.servers.length} @@`);
  for (const s of p.servers) {
    const from = s.renamed ? ` (from "${s.entry}")` : '';
    lines.push(s.action === 'add' ? `+server "${s.name}"${from}${what(s.entry)}` : ` server "${s.name}" is already in Switchboard${from}`);
  }
  for (const s of p.skipped) lines.push(` left in the client: "${s.entry}": ${s.reason}`);
  const diff = lines.join('\n') + '\n' + (p.diff ?? '');
  return { client: p.client, path: p.path, hash: p.hash, diff, changed: added.length > 0 || p.changed };
}

/** ownEntries are a client's servers other than Switchboard's own entries. */
export function ownEntries<T extends { Name: string }>(servers: T[]): T[] {
  return servers.filter((e) => !e.Name.startsWith('switchboard'));
}

/** importable are the clients installed here with servers of their own to import, most servers first. */
export function importable<C extends { installed: boolean; name: string; servers: { Name: string }[] }>(clients: C[]): C[] {
  return clients
    .filter((c) => c.installed && ownEntries(c.servers).length > 0)
    .sort((a, b) => ownEntries(b.servers).length - ownEntries(a.servers).length || a.name.localeCompare(b.name));
}
