// Theme: follow the OS (prefers-color-scheme) unless the user picked light
// or dark; the choice lives in localStorage.

import { writable } from 'svelte/store';

export type Theme = 'system' | 'light' | 'dark';
const KEY = 'switchboard.theme';

function load(): Theme {
  try {
    const t = localStorage.getItem(KEY);
    if (t === 'light' || t === 'dark') return t;
  } catch {
    /* storage off: follow the OS */
  }
  return 'system';
}

export const theme = writable<Theme>(load());

export function applyTheme(t: Theme): void {
  const root = document.documentElement;
  if (t === 'system') root.removeAttribute('data-theme');
  else root.setAttribute('data-theme', t);
  try {
    if (t === 'system') localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, t);
  } catch {
    /* not kept across reloads */
  }
}

/** isDark says whether the page shows dark colours now (for charts). */
export function isDark(): boolean {
  const attr = document.documentElement.getAttribute('data-theme');
  if (attr) return attr === 'dark';
  return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches;
}
