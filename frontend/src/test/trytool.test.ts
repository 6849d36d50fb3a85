import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import { REDACTED, argumentsOf, buildArguments, fieldsOf, forRetyping, initialValues, redactedFields } from '../lib/tryform';
import { showResult } from '../lib/toolresult';
import ToolResult from '../components/ToolResult.svelte';
import TryTool from '../components/TryTool.svelte';

// The schema of testmcp's form tool (supervisor/testmcp/content.go).
const schema = {
  type: 'object',
  properties: {
    text: { type: 'string', description: 'any text' },
    count: { type: 'integer', minimum: 0 },
    ratio: { type: 'number' },
    loud: { type: 'boolean' },
    color: { type: 'string', enum: ['red', 'green', 'blue'] },
    tags: { type: 'array', items: { type: 'string' } },
    options: { type: 'object' },
    apiKey: { type: 'string' },
    either: { anyOf: [{ type: 'string' }, { type: 'number' }] },
    maybe: { type: ['integer', 'null'] },
    done: { type: 'boolean' },
  },
  required: ['text', 'done'],
};

describe('the Try form from a tool input schema', () => {
  it('gives every kind its input, required fields first', () => {
    const fields = fieldsOf(schema);
    expect(fields.map((f) => `${f.name}:${f.kind}${f.json ? '/' + f.json : ''}${f.required ? '*' : ''}`)).toEqual([
      'text:string*', 'done:boolean*', 'count:integer', 'ratio:number', 'loud:boolean', 'color:enum',
      'tags:json/array', 'options:json/object', 'apiKey:string', 'either:json/any', 'maybe:integer',
    ]);
    expect(fields.find((f) => f.name === 'color')!.options).toEqual(['red', 'green', 'blue']);
    expect(fields.find((f) => f.name === 'apiKey')!.secret).toBe(true);
    expect(fields.find((f) => f.name === 'text')!.description).toBe('any text');
    expect(fieldsOf({ type: 'object' })).toEqual([]);
    expect(fieldsOf(null)).toEqual([]);
  });

  it('builds the arguments: typed values, optional empty fields left out', () => {
    const fields = fieldsOf(schema);
    const { values } = initialValues(fields);
    Object.assign(values, { text: 'hi', done: true, count: '3', ratio: '0.5', loud: 'false', color: 'blue', tags: '["a", "b"]', options: '{"k": 1}', either: '7' });
    const { args, errors } = buildArguments(fields, values);
    expect(errors).toEqual({});
    expect(args).toEqual({ text: 'hi', done: true, count: 3, ratio: 0.5, loud: false, color: 'blue', tags: ['a', 'b'], options: { k: 1 }, either: 7 });
  });

  it('names what is wrong with each field', () => {
    const fields = fieldsOf(schema);
    const { values } = initialValues(fields);
    Object.assign(values, { text: '', count: '2.5', ratio: 'abc', tags: '{"a":1}', options: '[1]', either: '{nope', maybe: '1e400' });
    const { errors } = buildArguments(fields, values);
    expect(errors.text).toBe('required');
    expect(errors.count).toBe('not a whole number: 2.5');
    expect(errors.ratio).toBe('not a number: abc');
    expect(errors.tags).toBe('a JSON array is expected ([…])');
    expect(errors.options).toBe('a JSON object is expected ({…})');
    expect(errors.either).toMatch(/^not JSON: /);
    expect(errors.maybe).toBe('not a number: 1e400');
    expect(errors.done).toBeUndefined(); // a required checkbox is false, not missing
  });

  it('Run again starts from the call: redacted values marked and refused until typed again', () => {
    const fields = fieldsOf(schema);
    const recorded = argumentsOf(JSON.stringify({ text: 'again', count: 4, tags: ['x'], apiKey: REDACTED, options: { auth: `Bearer ${REDACTED}` }, gone: 1 }))!;
    const { values, extra } = initialValues(fields, recorded);
    expect(values.text).toBe('again');
    expect(values.count).toBe('4');
    expect(values.tags).toBe('[\n  "x"\n]');
    expect(extra).toEqual(['gone']);
    expect(redactedFields(fields, recorded)).toEqual(['options', 'apiKey']);
    let built = buildArguments(fields, values);
    expect(built.errors.apiKey).toBe('the history redacted this value: type it again');
    expect(built.errors.options).toBe('the history redacted this value: type it again');
    // The form clears a value redacted whole; left empty it is refused, not left out.
    const cleared = forRetyping(fields, values, redactedFields(fields, recorded));
    expect([cleared.apiKey, cleared.options]).toEqual(['', values.options]);
    expect(buildArguments(fields, cleared, ['options', 'apiKey']).errors.apiKey).toBe('the history redacted this value: type it again');
    values.apiKey = 'sk-typed-again';
    values.options = '{"auth": "Bearer real"}';
    built = buildArguments(fields, values);
    expect(built.errors).toEqual({});
    expect(built.args).toMatchObject({ text: 'again', count: 4, tags: ['x'], apiKey: 'sk-typed-again', options: { auth: 'Bearer real' } });
    expect(argumentsOf('{"cut at the lim')).toBeUndefined();
  });
});

describe('a tool result as a client sees it', () => {
  const png = 'iVBORw0KGgo=';
  it('reads every kind of block, the structured content and isError', () => {
    const shown = showResult({
      content: [
        { type: 'text', text: 'hello' },
        { type: 'image', data: png, mimeType: 'image/png' },
        { type: 'image', data: png, mimeType: 'image/svg+xml' },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'resource_link', uri: 'test://static/hello', name: 'hello', mimeType: 'text/plain' },
        { type: 'resource', resource: { uri: 'test://x', text: 'inside', mimeType: 'text/plain' } },
        { type: 'weird', x: 1 },
      ],
      structuredContent: { text: 'hello' },
    });
    expect(shown.isError).toBe(false);
    expect(shown.blocks.map((b) => b.kind)).toEqual(['text', 'image', 'media', 'media', 'link', 'resource', 'other']);
    expect(shown.blocks[1]).toEqual({ kind: 'image', src: `data:image/png;base64,${png}`, mime: 'image/png', bytes: 8 });
    expect(shown.structured).toBe('{\n  "text": "hello"\n}');
    expect(showResult({ isError: true, content: [{ type: 'text', text: 'nope' }] }).isError).toBe(true);
  });

  let cmp: ReturnType<typeof mount> | undefined;
  afterEach(() => {
    if (cmp) unmount(cmp);
    cmp = undefined;
    document.body.innerHTML = '';
  });
  it('renders text, the image, the link, structured content, and a tool error marked', () => {
    const target = document.createElement('div');
    document.body.appendChild(target);
    cmp = mount(ToolResult, {
      target,
      props: { result: { content: [{ type: 'text', text: 'a gradient' }, { type: 'image', data: png, mimeType: 'image/png' }, { type: 'resource_link', uri: 'test://static/hello', name: 'hello' }], structuredContent: { kind: 'link' } } },
    });
    flushSync();
    expect(target.querySelector('[data-block="text"]')!.textContent).toBe('a gradient');
    expect(target.querySelector('img')!.getAttribute('src')).toBe(`data:image/png;base64,${png}`);
    expect(target.querySelector('[data-block="link"]')!.textContent).toContain('test://static/hello');
    expect(target.querySelector('[data-block="structured"]')!.textContent).toContain('"kind": "link"');
    expect(target.querySelector('[role="alert"]')).toBeNull();
    unmount(cmp);
    cmp = mount(ToolResult, { target, props: { result: { isError: true, content: [{ type: 'text', text: 'it broke' }] } } });
    flushSync();
    expect(target.querySelector('[data-result="error"] [role="alert"]')!.textContent).toContain('The tool reported an error');
    expect(target.querySelector('[data-block="text"]')!.textContent).toBe('it broke');
  });
});

describe('the Try dialog', () => {
  let cmp: ReturnType<typeof mount> | undefined;
  afterEach(() => {
    if (cmp) unmount(cmp);
    cmp = undefined;
    document.body.innerHTML = '';
    vi.unstubAllGlobals();
  });
  it('runs a recorded call again: the redacted value marked, refused until typed, then called with the arguments', async () => {
    const posted: unknown[] = [];
    vi.stubGlobal('fetch', async (path: string, init?: RequestInit) => {
      const json = (v: unknown) => new Response(JSON.stringify(v), { status: 200, headers: { 'Content-Type': 'application/json' } });
      if (init?.method === 'POST') {
        posted.push(JSON.parse(String(init.body)));
        return json({ server: 'alpha', tool: 'form', duration: 2_000_000, result: { content: [{ type: 'text', text: 'done' }] } });
      }
      expect(path).toBe('/api/v1/servers/alpha/tools/form');
      return json({ server: 'alpha', name: 'form', description: 'Reply with the arguments given.', inputSchema: schema });
    });
    const target = document.createElement('div');
    document.body.appendChild(target);
    cmp = mount(TryTool, { target, props: { server: 'alpha', tool: 'form', args: { text: 'again', done: true, apiKey: REDACTED }, onclose: () => {} } });
    await vi.waitFor(() => expect(document.querySelector('[data-field="apiKey"]')).not.toBeNull());
    flushSync();
    expect(document.querySelector('[data-redacted-note]')!.textContent).toContain('apiKey');
    expect(document.querySelector('[data-field="apiKey"]')!.hasAttribute('data-redacted')).toBe(true);
    const form = document.querySelector('#try-form') as HTMLFormElement;
    form.requestSubmit();
    flushSync();
    expect(document.querySelector('[data-field="apiKey"] .field-error')!.textContent).toContain('type it again');
    expect(posted).toEqual([]);
    const key = document.querySelector('[data-field="apiKey"] input') as HTMLInputElement;
    key.value = 'sk-new';
    key.dispatchEvent(new Event('input', { bubbles: true }));
    form.requestSubmit();
    await vi.waitFor(() => expect(document.querySelector('[data-try-result] [data-block="text"]')).not.toBeNull());
    expect(posted).toEqual([{ arguments: { text: 'again', done: true, apiKey: 'sk-new' } }]);
    expect(document.querySelector('[data-try-result] [data-block="text"]')!.textContent).toBe('done');
  });
});
