// A remote server's sign-in (OAuth) as the dashboard shows it: the state in
// words with the reason, the calls that start and end one, and how an
// "auth" event of the live feed moves a server's state.

import { api } from './api';
import type { AuthEvent, AuthStatus, LoginResult, LogoutResult } from './types';

const enc = encodeURIComponent;

/** The states of AuthStatus.state (wire.AuthNeedsSignIn …). */
export const NEEDS_SIGN_IN = 'needs sign-in';
export const SIGNING_IN = 'signing in';
export const SIGNED_IN = 'signed in';

/** reasonText says why a server needs a sign-in, in plain words; "" for none. */
export function reasonText(reason: string | undefined, scope?: string): string {
  switch (reason ?? '') {
    case '':
      return '';
    case 'first use':
      return 'First use: Switchboard has not signed in to it yet.';
    case 'token rejected':
      return 'The server no longer accepts the last sign-in (it expired or was revoked).';
    case 'refresh refused':
      return 'The sign-in expired and the server refused to renew it.';
    case 'scope needed':
      return `The server asks for more access than the last sign-in gave${scope ? ` (${scope})` : ''}.`;
    case 'signed out':
      return 'You signed out.';
    default:
      return reason!;
  }
}

export interface AuthLook {
  label: string;
  tone: 'ok' | 'info' | 'warn';
  /** The why, or what goes on now. */
  text: string;
}

/** authLook is how a sign-in state reads: a short label, a tone, and the why. */
export function authLook(a: AuthStatus): AuthLook {
  switch (a.state) {
    case SIGNED_IN:
      return { label: 'Signed in', tone: 'ok', text: 'Switchboard holds a sign-in for it and renews it by itself.' };
    case SIGNING_IN:
      return { label: 'Signing in…', tone: 'info', text: 'Waiting for you to finish in the browser.' };
    case NEEDS_SIGN_IN:
      return { label: 'Needs sign-in', tone: 'warn', text: reasonText(a.reason, a.scope) || 'Its calls fail until you sign in.' };
    default:
      return { label: a.state, tone: 'warn', text: reasonText(a.reason, a.scope) };
  }
}

/**
 * withAuthEvent is the server's sign-in after an auth event: the event has
 * the state, reason, scope and error, not the link (the view has that, and
 * is fetched again); a link is kept only while signing in.
 */
export function withAuthEvent(old: AuthStatus | undefined, ev: AuthEvent, now = new Date()): AuthStatus {
  const next: AuthStatus = { state: ev.state, since: old?.state === ev.state ? old.since : now.toISOString() };
  if (ev.reason) next.reason = ev.reason;
  if (ev.scope) next.scope = ev.scope;
  if (ev.error) next.error = ev.error;
  if (ev.state === SIGNING_IN && old?.state === SIGNING_IN && old.signInUrl) next.signInUrl = old.signInUrl;
  return next;
}

/** login starts a sign-in: the daemon opens the browser where it can and answers with the link. */
export function login(name: string, post = api.post): Promise<LoginResult> {
  return post<LoginResult>(`/api/v1/servers/${enc(name)}/login`);
}

/** logout deletes the server's tokens (revoking them where the server supports it). */
export function logout(name: string, post = api.post): Promise<LogoutResult> {
  return post<LogoutResult>(`/api/v1/servers/${enc(name)}/logout`);
}
