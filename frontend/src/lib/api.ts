// A thin typed wrapper over fetch for the daemon's /api/v1. Same-origin
// relative URLs only: the browser sends the session cookie, the Wails
// window's asset server proxies /api to the daemon, and the page never sees
// a token.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export type Fetch = typeof fetch;

export async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  fetchFn: Fetch = fetch,
): Promise<T> {
  const init: RequestInit = { method, headers: { Accept: 'application/json' }, credentials: 'same-origin' };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
  }
  let res: Response;
  try {
    res = await fetchFn(path, init);
  } catch (err) {
    throw new ApiError(0, `The daemon did not answer (${(err as Error).message}). Is Switchboard running?`);
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let data: unknown = undefined;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      if (!res.ok) throw new ApiError(res.status, `${res.status} ${res.statusText}: ${text.slice(0, 200)}`);
      throw new ApiError(res.status, `${method} ${path}: the answer is not JSON`);
    }
  }
  if (!res.ok) {
    const msg = data && typeof data === 'object' && 'error' in data ? String((data as { error: unknown }).error) : `${res.status} ${res.statusText}`;
    if (res.status === 401) throw new ApiError(401, `${msg} — open the dashboard again from the tray or with \`switchboard open\` to log in.`);
    throw new ApiError(res.status, msg);
  }
  return data as T;
}

export const api = {
  get: <T>(path: string) => request<T>('GET', path),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body ?? {}),
  put: <T>(path: string, body: unknown) => request<T>('PUT', path, body),
  del: <T>(path: string) => request<T>('DELETE', path),
};

/** query builds "?a=1&b=2" from the non-empty values. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
