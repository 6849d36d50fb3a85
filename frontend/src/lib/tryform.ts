// Try a tool: a form generated from the tool's input schema (JSON Schema,
// as the MCP server lists it), and the arguments the form's values make.
// Strings, numbers, integers and booleans get inputs of their own, an enum
// a select; arrays, objects and anything the form cannot model (anyOf,
// a type list) are JSON text, checked before the call. Values are kept
// as text (what the inputs hold) and turned into arguments on submit.

/** The redaction mark the history puts in place of a secret's value. */
export const REDACTED = '[redacted]';

export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';

export interface Field {
  name: string;
  kind: FieldKind;
  required: boolean;
  title: string;
  description: string;
  /** The enum's values (kind "enum"), in the schema's order. */
  options?: unknown[];
  /** What JSON text must hold (kind "json"): "array", "object", or "any". */
  json?: 'array' | 'object' | 'any';
  /** The schema's default, if any. */
  default?: unknown;
  /** A string field whose value should not be shown as typed (a secret's name). */
  secret?: boolean;
}

/** A form's values: text for every field, true/false for a required boolean's checkbox. */
export type Values = Record<string, string | boolean>;

type Schema = Record<string, unknown>;
const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Names a secret goes by (the history's redaction rule, in short). */
const SECRET = /token|key|password|passwd|secret|auth|cookie|credential/i;

/** fieldKind is the input a property schema gets. */
function fieldKind(p: Schema): Pick<Field, 'kind' | 'json' | 'options'> {
  if (Array.isArray(p.enum) && p.enum.length > 0) return { kind: 'enum', options: p.enum };
  if ('const' in p) return { kind: 'enum', options: [p.const] };
  let type = p.type;
  // ["string", "null"]: the one type that is not null.
  if (Array.isArray(type)) {
    const real = type.filter((t) => t !== 'null');
    type = real.length === 1 ? real[0] : undefined;
  }
  switch (type) {
    case 'string':
    case 'number':
    case 'integer':
    case 'boolean':
      return { kind: type };
    case 'array':
      return { kind: 'json', json: 'array' };
    case 'object':
      return { kind: 'json', json: 'object' };
  }
  return { kind: 'json', json: 'any' };
}

/** fieldsOf lists the form's fields of an input schema: its properties, required ones first, each group in the schema's order. */
export function fieldsOf(schema: unknown): Field[] {
  if (!isObject(schema) || !isObject(schema.properties)) return [];
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  const fields: Field[] = Object.entries(schema.properties).map(([name, raw]) => {
    const p = isObject(raw) ? raw : {};
    const kind = fieldKind(p);
    return {
      name,
      ...kind,
      required: required.has(name),
      title: typeof p.title === 'string' ? p.title : '',
      description: typeof p.description === 'string' ? p.description : '',
      default: p.default,
      secret: kind.kind === 'string' && (SECRET.test(name) || p.format === 'password' || p.writeOnly === true),
    };
  });
  return [...fields.filter((f) => f.required), ...fields.filter((f) => !f.required)];
}

/** optionText is how an enum's value reads in its select (and is told apart again). */
export const optionText = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** textOf is a value as its field's input holds it. */
function textOf(f: Field, v: unknown): string | boolean {
  if (v === undefined) return f.kind === 'boolean' && f.required ? false : '';
  switch (f.kind) {
    case 'boolean':
      return f.required ? v === true : v === true ? 'true' : v === false ? 'false' : '';
    case 'enum':
      return optionText(v);
    case 'json':
      return JSON.stringify(v, null, 2);
    default:
      return typeof v === 'string' ? v : JSON.stringify(v);
  }
}

/**
 * initialValues are the form's values: the arguments of a call to run
 * again where given, else the schema's defaults. Arguments that are not
 * fields of the schema (the tool changed since) are left out: extra says
 * which.
 */
export function initialValues(fields: Field[], args?: Record<string, unknown>): { values: Values; extra: string[] } {
  const values: Values = {};
  for (const f of fields) values[f.name] = textOf(f, args ? args[f.name] : f.default);
  const extra = args ? Object.keys(args).filter((k) => !fields.some((f) => f.name === k)) : [];
  return { values, extra };
}

/**
 * forRetyping clears, in values, the text fields the history redacted
 * whole: the mark is no value to edit (JSON text keeps the rest of it,
 * with the mark to replace where it is).
 */
export function forRetyping(fields: Field[], values: Values, redacted: string[]): Values {
  const out = { ...values };
  for (const f of fields) if (redacted.includes(f.name) && f.kind !== 'json' && out[f.name] === REDACTED) out[f.name] = '';
  return out;
}

/**
 * redactedFields are the fields whose value in args the history redacted
 * (the whole value, or a credential inside it): the user must type them
 * again before running the call again.
 */
export function redactedFields(fields: Field[], args?: Record<string, unknown>): string[] {
  if (!args) return [];
  return fields.filter((f) => f.name in args && JSON.stringify(args[f.name]).includes(REDACTED)).map((f) => f.name);
}

/**
 * buildArguments turns the form's values into the tool's arguments, or
 * says what is wrong with each field that cannot be: a required field left
 * empty, a number that is not one, JSON text that does not parse or is not
 * of the kind asked, a value still redacted. Optional fields left empty
 * are not sent. retype are the fields whose recorded value was redacted
 * (redactedFields): left empty, they are refused too, never just left out.
 */
export function buildArguments(fields: Field[], values: Values, retype: string[] = []): { args: Record<string, unknown>; errors: Record<string, string> } {
  const args: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (typeof v === 'boolean') {
      args[f.name] = v;
      continue;
    }
    const text = (v ?? '').toString();
    if (text.includes(REDACTED) || (text === '' && retype.includes(f.name))) {
      errors[f.name] = 'the history redacted this value: type it again';
      continue;
    }
    if (text.trim() === '' && f.kind !== 'string') {
      if (f.required) errors[f.name] = 'required';
      continue;
    }
    if (text === '' && f.kind === 'string') {
      if (f.required) errors[f.name] = 'required';
      continue;
    }
    switch (f.kind) {
      case 'string':
        args[f.name] = text;
        break;
      case 'number':
      case 'integer': {
        const n = Number(text.trim());
        if (!Number.isFinite(n)) errors[f.name] = `not a number: ${text.trim()}`;
        else if (f.kind === 'integer' && !Number.isInteger(n)) errors[f.name] = `not a whole number: ${text.trim()}`;
        else args[f.name] = n;
        break;
      }
      case 'boolean':
        args[f.name] = text === 'true';
        break;
      case 'enum': {
        const i = (f.options ?? []).findIndex((o) => optionText(o) === text);
        if (i < 0) errors[f.name] = `not one of the choices: ${text}`;
        else args[f.name] = f.options![i];
        break;
      }
      case 'json': {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch (e) {
          errors[f.name] = `not JSON: ${(e as Error).message}`;
          break;
        }
        if (f.json === 'array' && !Array.isArray(parsed)) errors[f.name] = 'a JSON array is expected ([…])';
        else if (f.json === 'object' && !isObject(parsed)) errors[f.name] = 'a JSON object is expected ({…})';
        else args[f.name] = parsed;
        break;
      }
    }
  }
  return { args, errors };
}

/** argumentsOf reads a recorded call's arguments (JSON text or a value) as an object, or undefined. */
export function argumentsOf(recorded: unknown): Record<string, unknown> | undefined {
  let v = recorded;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      return undefined; // cut at the history's limit: not JSON any more
    }
  }
  return isObject(v) ? v : undefined;
}
