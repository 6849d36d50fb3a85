import { afterEach, describe, expect, it, vi } from 'vitest';
import AskToggle from '../components/AskToggle.svelte';
import CallDecision from '../components/CallDecision.svelte';
import PendingAsks from '../components/PendingAsks.svelte';
import type { Ask, Call } from '../lib/types';
import { FakeEventSource, flush } from './fakes';
import { fakeStream, render, settle, unmountAll } from './mount';

const now = Date.parse('2026-12-02T10:00:00Z');
const ask: Ask = {
  id: 'ask-1',
  server: 'files',
  tool: 'delete_file',
  client: 'cursor',
  tier: 'destructive',
  arguments: { path: '/tmp/x', token: '[redacted]' },
  asked: '2026-12-02T09:59:50Z',
  deadline: '2026-12-02T10:01:35Z',
};

afterEach(unmountAll);

describe('PendingAsks', () => {
  it('shows each pending ask with its redacted arguments and time left, answers Allow and Deny, and follows ask events', async () => {
    const requests: { method: string; url: string; body?: unknown }[] = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      requests.push({ method: init.method ?? 'GET', url, body: init.body ? JSON.parse(String(init.body)) : undefined });
      if (init.method === 'POST') {
        const body = JSON.parse(String(init.body));
        return new Response(JSON.stringify({ id: url.split('/').pop(), allowed: body.allow, by: 'dashboard', at: '2026-12-02T10:00:01Z' }), { status: 200 });
      }
      return new Response(JSON.stringify([ask]), { status: 200 });
    });
    const sources: FakeEventSource[] = [];
    const stream = fakeStream(sources);
    stream.start();
    const target = await render(PendingAsks, { props: { stream, now: () => now } });

    expect(requests[0]).toEqual({ method: 'GET', url: '/api/v1/asks', body: undefined });
    expect(target.querySelector('h3')!.textContent).toContain('1 call waiting for your yes');
    const card = target.querySelector('[data-ask="ask-1"]')!;
    expect(card.textContent).toContain('files · delete_file');
    expect(card.textContent).toContain('from cursor');
    expect(card.querySelector('[data-left]')!.textContent).toBe('1m 35s left');
    expect(card.querySelector('pre')!.textContent).toContain('[redacted]');

    // A second ask arrives on the stream; the first is allowed.
    sources[0].emit('ask', { state: 'pending', ask: { ...ask, id: 'ask-2', tool: 'drop_table', deadline: '2026-12-02T10:00:09Z' } }, 1);
    await settle();
    expect(target.querySelectorAll('article.ask')).toHaveLength(2);
    expect(target.querySelector('[data-ask="ask-2"] [data-left]')!.textContent).toBe('9s left');
    (target.querySelector('button[aria-label="Allow delete_file of files"]') as HTMLButtonElement).click();
    await flush();
    await settle();
    expect(requests[1]).toEqual({ method: 'POST', url: '/api/v1/asks/ask-1', body: { allow: true } });
    expect(target.querySelector('[data-ask="ask-1"]')).toBeNull();

    (target.querySelector('button[aria-label="Deny drop_table of files"]') as HTMLButtonElement).click();
    await flush();
    await settle();
    expect(requests[2]).toEqual({ method: 'POST', url: '/api/v1/asks/ask-2', body: { allow: false } });
    expect(target.querySelector('section.asks')).toBeNull();

    // One decided elsewhere (the tray, a timeout) leaves the card.
    sources[0].emit('ask', { state: 'pending', ask: { ...ask, id: 'ask-3' } }, 2);
    await settle();
    expect(target.querySelectorAll('article.ask')).toHaveLength(1);
    sources[0].emit('ask', { state: 'decided', ask: { ...ask, id: 'ask-3' }, decision: { id: 'ask-3', allowed: false, by: 'timeout', at: '2026-12-02T10:01:35Z' } }, 3);
    await settle();
    expect(target.querySelector('section.asks')).toBeNull();
  });

  it('says so when the ask is gone by the time it is answered', async () => {
    vi.stubGlobal('fetch', async (_url: string, init: RequestInit) =>
      init.method === 'POST'
        ? new Response(JSON.stringify({ error: 'no pending ask "ask-1"' }), { status: 404 })
        : new Response(JSON.stringify([ask]), { status: 200 }),
    );
    const target = await render(PendingAsks, { props: { stream: fakeStream(), now: () => now } });
    (target.querySelector('button[aria-label="Allow delete_file of files"]') as HTMLButtonElement).click();
    await flush();
    await settle();
    expect(target.textContent).toContain('no longer waits');
  });
});

describe('AskToggle', () => {
  it('turns asking on for the server', async () => {
    const requests: { method: string; url: string; body?: unknown }[] = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      requests.push({ method: init.method ?? 'GET', url, body: init.body ? JSON.parse(String(init.body)) : undefined });
      return new Response(init.body ? String(init.body) : '{}', { status: 200 });
    });
    const target = await render(AskToggle, { props: { server: 'files', enabled: false } });
    const box = target.querySelector('input[type="checkbox"]') as HTMLInputElement;
    expect(box.checked).toBe(false);
    box.click();
    await flush();
    await settle();
    expect(requests[0]).toEqual({ method: 'PUT', url: '/api/v1/servers/files/ask-before-destructive', body: { enabled: true } });
    expect(box.checked).toBe(true);
  });
});

describe('CallDecision', () => {
  it('shows who decided and whether the call was allowed, and nothing for a call that was not asked for', async () => {
    const call = { id: 1, decidedBy: 'timeout', decisionAllowed: false, decidedAt: '2026-12-02T10:01:35Z' } as Call;
    let target = await render(CallDecision, { props: { call } });
    expect(target.querySelector('[data-decision="timeout"]')!.textContent).toContain('denied');
    expect(target.textContent).toContain('nobody in time');
    target = await render(CallDecision, { props: { call: { ...call, decidedBy: 'dashboard', decisionAllowed: true } } });
    expect(target.textContent).toContain('allowed');
    expect(target.textContent).toContain('on the dashboard');
    target = await render(CallDecision, { props: { call: { id: 2 } as Call } });
    expect(target.textContent!.trim()).toBe('');
  });
});
