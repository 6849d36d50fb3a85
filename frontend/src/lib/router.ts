// Hash routing (#/servers/name): works the same in the Wails window, behind
// the daemon and from a file, and needs nothing of the server.

import { readable } from 'svelte/store';

export interface Route {
  page: string;
  params: string[];
}

export const PAGES = ['servers', 'catalog', 'clients', 'history', 'usage', 'settings'] as const;

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const page = parts[0] && (PAGES as readonly string[]).includes(parts[0]) ? parts[0] : 'servers';
  return { page, params: parts.slice(1) };
}

export function href(page: string, ...params: string[]): string {
  return '#/' + [page, ...params.map(encodeURIComponent)].join('/');
}

export const route = readable<Route>(parseRoute(typeof location === 'undefined' ? '' : location.hash), (set) => {
  const on = () => set(parseRoute(location.hash));
  window.addEventListener('hashchange', on);
  return () => window.removeEventListener('hashchange', on);
});

export function navigate(page: string, ...params: string[]): void {
  location.hash = href(page, ...params);
}
