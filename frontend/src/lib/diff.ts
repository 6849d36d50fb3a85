// A unified diff split into typed lines for the diff view.

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
