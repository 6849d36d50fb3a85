// The first run's featured servers: a few catalog entries most people
// start with, installed from the Servers page in one click (or, when the
// server needs something from the user first, such as a folder, one click
// to its install form).

import { fieldsOf, initialValues, installablePackage, validate } from './install';
import type { CatalogEntry } from './types';

/** The entries featured first, by catalog name, in this order, when the catalog has them. */
export const FEATURED = [
  'io.github.modelcontextprotocol/server-filesystem',
  'io.github.modelcontextprotocol/server-memory',
  'io.github.modelcontextprotocol/server-fetch',
  'io.github.modelcontextprotocol/server-git',
];

/** needsInput reports whether installing e asks the user for a value first (a required input without a default). */
export function needsInput(e: CatalogEntry): boolean {
  const fields = fieldsOf(installablePackage(e));
  return Object.keys(validate(fields, initialValues(fields))).length > 0;
}

/**
 * featured picks up to n entries to feature: those of FEATURED the catalog
 * has, then other curated entries that run here and need no input, then
 * any such entry. Entries that cannot run here (remote-only, no package
 * Switchboard runs) are left out: a first install should just work.
 */
export function featured(entries: CatalogEntry[], n = 4): CatalogEntry[] {
  const local = entries.filter((e) => !!installablePackage(e) && e.status !== 'deprecated');
  const out: CatalogEntry[] = [];
  const add = (e: CatalogEntry | undefined) => {
    if (e && out.length < n && !out.includes(e)) out.push(e);
  };
  for (const name of FEATURED) add(local.find((e) => e.name === name));
  for (const e of local) if (e.source === 'embedded' && !needsInput(e)) add(e);
  for (const e of local) if (!needsInput(e)) add(e);
  return out;
}
