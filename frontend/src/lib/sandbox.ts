// The server page's account of a server's confinement (wire.Sandbox): a
// one-line verdict, and a tone that makes "not in force" stand out.

import type { Confinement, Sandbox } from './types';

export type SandboxTone = 'ok' | 'warn' | 'idle';

export interface SandboxVerdict {
  tone: SandboxTone;
  /** The headline: "Confined (landlock ABI 7)", "Not in force: …". */
  title: string;
  /** What the kernel cannot enforce of the policy, in words; "" when nothing. */
  missing: string;
}

// The API's reasons start with "not confined: " when they say why the
// server runs without its policy; the headline says that already.
const stripNotConfined = (r: string) => r.replace(/^not confined: /, '');
const NOT_STARTED = 'not started yet';

/**
 * sandboxVerdict says whether the policy is in force. A server the config
 * does not confine is 'idle' (the reason says why: "sandbox": false, a
 * remote server, the default for hand-added ones); one the config confines
 * whose last process ran without it is 'warn' (no Landlock in the kernel,
 * the launcher failed); one not started yet is 'idle' too.
 */
export function sandboxVerdict(sb: Sandbox): SandboxVerdict {
  const missing = sb.missing?.length ? `Not enforced by this kernel: ${sb.missing.join(', ')}.` : '';
  const reason = stripNotConfined(sb.reason ?? '');
  if (!sb.confined) return { tone: 'idle', title: `Not confined${reason ? `: ${reason}` : ''}`, missing: '' };
  if (sb.enforced) return { tone: 'ok', title: `Confined and in force${sb.mechanism ? ` (${sb.mechanism})` : ''}`, missing };
  if (reason === NOT_STARTED) return { tone: 'idle', title: 'Confined when it starts (not started yet)', missing };
  return { tone: 'warn', title: `Not in force: ${reason || 'the launcher did not report confinement'}`, missing };
}

/** networkText says what the policy lets the server reach. */
export function networkText(sb: Sandbox): string {
  if (!sb.network) return 'No network: TCP connections and other sockets are refused.';
  const ports = sb.denyPorts ?? [];
  if (!ports.length) return 'Network allowed.';
  return `Network allowed, except TCP port${ports.length === 1 ? '' : 's'} ${ports.join(', ')} (Switchboard's own).`;
}

/** confinementText is one process's launcher report, for the processes table. */
export function confinementText(c: Confinement | undefined): string {
  if (!c) return 'unconfined';
  if (c.enforced) return `confined${c.mechanism ? ` · ${c.mechanism}` : ''}${c.missing?.length ? ` · without ${c.missing.join(', ')}` : ''}`;
  return `not confined${c.reason ? `: ${stripNotConfined(c.reason)}` : ''}`;
}
