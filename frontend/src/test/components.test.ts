import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import StateBadge from '../components/StateBadge.svelte';
import DiffView from '../components/DiffView.svelte';
import PlanDialog from '../components/PlanDialog.svelte';
import { parseDiff } from '../lib/diff';
import type { ClientPlan } from '../lib/types';
import { flush } from './fakes';

let cmps: ReturnType<typeof mount>[] = [];
afterEach(() => {
  cmps.forEach((c) => unmount(c));
  cmps = [];
  document.body.innerHTML = '';
});
function render(C: any, props: Record<string, unknown>) {
  const target = document.createElement('div');
  document.body.appendChild(target);
  cmps.push(mount(C, { target, props }));
  flushSync();
  return target;
}

describe('StateBadge', () => {
  it.each([
    ['running', 'Running', 'ok', 'circle'],
    ['starting', 'Starting', 'info', 'path'],
    ['backoff', 'Restarting', 'warn', 'path'],
    ['failing', 'Failed', 'bad', 'path'],
    ['failed', 'Failed', 'bad', 'path'],
    ['stopped', 'Stopped', 'idle', 'circle'],
    ['disabled', 'Disabled', 'idle', 'path'],
    ['weird', 'Weird', 'idle', 'circle'],
  ])('%s shows the word %s, tone %s and a shape', (state, word, tone, shape) => {
    const el = render(StateBadge, { state });
    const badge = el.querySelector('.badge')!;
    expect(badge.textContent!.trim()).toBe(word);
    expect(badge.classList.contains(tone)).toBe(true);
    expect(badge.querySelector(`svg ${shape}`)).not.toBeNull();
    expect(badge.querySelector('svg')!.getAttribute('aria-hidden')).toBe('true');
  });

  it('gives different states different shapes, not only colours', () => {
    const shapes = ['running', 'starting', 'backoff', 'failing', 'stopped', 'disabled'].map((s) => render(StateBadge, { state: s }).querySelector('svg')!.innerHTML);
    expect(new Set(shapes).size).toBe(shapes.length);
  });
});

const DIFF = `--- a/claude_desktop_config.json
+++ b/claude_desktop_config.json
@@ -1,3 +1,6 @@
 {
-  "mcpServers": {}
+  "mcpServers": {
+    "switchboard": {
+      "url": "http://127.0.0.1:7777/mcp"
+    }
+  }
 }
`;

describe('diff', () => {
  it('parses a unified diff with line numbers', () => {
    const lines = parseDiff(DIFF);
    expect(lines.map((l) => l.kind)).toEqual(['file', 'file', 'hunk', 'ctx', 'del', 'add', 'add', 'add', 'add', 'add', 'ctx']);
    expect(lines[4]).toEqual({ kind: 'del', text: '  "mcpServers": {}', oldNo: 2 });
    expect(lines[5]).toEqual({ kind: 'add', text: '  "mcpServers": {', newNo: 2 });
    expect(lines[10]).toEqual({ kind: 'ctx', text: '}', oldNo: 3, newNo: 7 });
  });

  it('DiffView marks added and removed lines with signs and words, not colour alone', () => {
    const el = render(DiffView, { diff: DIFF });
    expect(el.querySelector('.summary')!.textContent).toBe('5 lines added, 1 removed');
    const del = el.querySelector('tr.del')!;
    expect(del.querySelector('.sign')!.textContent).toBe('−');
    expect(del.querySelector('.text')!.textContent).toBe('removed:   "mcpServers": {}');
    expect(el.querySelectorAll('tr.add')).toHaveLength(5);
  });
});

describe('PlanDialog', () => {
  const plan: ClientPlan = { client: 'claude', path: '/home/me/.config/Claude/claude_desktop_config.json', hash: 'h1', diff: DIFF, changed: true };

  it('shows the diff first and applies with the plan hash', async () => {
    const applied: string[] = [];
    let closed = 0;
    let result: unknown = null;
    const el = render(PlanDialog, {
      title: 'Connect Claude',
      verb: 'Connect',
      plan: async () => plan,
      apply: async (hash: string) => (applied.push(hash), { id: 'claude', connected: true }),
      onclose: () => closed++,
      onapplied: (r: unknown) => (result = r),
    });
    await flush();
    flushSync();
    expect(el.ownerDocument.body.textContent).toContain(plan.path);
    expect(el.ownerDocument.querySelectorAll('tr.add')).toHaveLength(5);
    expect(applied).toEqual([]);
    const btn = [...el.ownerDocument.querySelectorAll('button')].find((b) => b.textContent === 'Connect')!;
    btn.click();
    await flush();
    expect(applied).toEqual(['h1']);
    expect(result).toEqual({ id: 'claude', connected: true });
    expect(closed).toBe(1);
  });

  it('shows an apply error and fetches a new plan when the file changed', async () => {
    let plans = 0;
    const el = render(PlanDialog, {
      title: 'Connect',
      verb: 'Connect',
      plan: async () => (plans++, { ...plan, hash: `h${plans}` }),
      apply: async () => {
        throw new Error('/x.json changed since the plan was shown; look at the new plan first');
      },
      onclose: () => {},
      onapplied: () => {},
    });
    await flush();
    flushSync();
    [...el.ownerDocument.querySelectorAll('button')].find((b) => b.textContent === 'Connect')!.click();
    await flush();
    flushSync();
    expect(el.ownerDocument.querySelector('[role=alert]')!.textContent).toContain('changed since the plan');
    expect(plans).toBe(2);
  });

  it('says when there is nothing to change', async () => {
    const el = render(PlanDialog, { title: 't', verb: 'Connect', plan: async () => ({ ...plan, changed: false, diff: '' }), apply: async () => ({}), onclose: () => {}, onapplied: () => {} });
    await flush();
    flushSync();
    expect(el.ownerDocument.body.textContent).toContain('nothing to change');
  });
});
