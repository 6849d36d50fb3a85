// How a server state looks: colour, a word, and a shape, so that the state
// never rests on colour alone.

export interface StateLook {
  label: string;
  tone: 'ok' | 'info' | 'warn' | 'bad' | 'idle';
  shape: 'dot' | 'half' | 'triangle' | 'cross' | 'ring' | 'dash';
  hint: string;
}

const LOOKS: Record<string, StateLook> = {
  running: { label: 'Running', tone: 'ok', shape: 'dot', hint: 'At least one process is ready.' },
  ready: { label: 'Running', tone: 'ok', shape: 'dot', hint: 'At least one process is ready.' },
  busy: { label: 'Busy', tone: 'ok', shape: 'dot', hint: 'Processes are serving calls.' },
  starting: { label: 'Starting', tone: 'info', shape: 'half', hint: 'A process is starting.' },
  stopping: { label: 'Stopping', tone: 'info', shape: 'half', hint: 'Processes are shutting down.' },
  backoff: { label: 'Restarting', tone: 'warn', shape: 'triangle', hint: 'It crashed; the next start waits a little.' },
  failing: { label: 'Failed', tone: 'bad', shape: 'cross', hint: 'It crashed too often and stays down until started again.' },
  failed: { label: 'Failed', tone: 'bad', shape: 'cross', hint: 'Its last start or process failed; it stays down until started again.' },
  stopped: { label: 'Stopped', tone: 'idle', shape: 'ring', hint: 'No process runs. It starts on the first call, or with Start.' },
  disabled: { label: 'Disabled', tone: 'idle', shape: 'dash', hint: 'Disabled in the config: it never runs.' },
};

export function stateLook(state: string | undefined): StateLook {
  const s = (state ?? '').toLowerCase();
  return LOOKS[s] ?? { label: s ? s[0].toUpperCase() + s.slice(1) : 'Unknown', tone: 'idle', shape: 'ring', hint: '' };
}

/** The states in which a server runs or is about to. */
export const ACTIVE_STATES = ['running', 'busy', 'starting', 'backoff'];

/**
 * toolCount is the Tools column of the servers list: what is under way
 * until the server's first listing ("starting…", "listing…"; never a "0"
 * that only means "not known yet"), then the count, "on/all" when some
 * are disabled.
 */
export function toolCount(v: { state: string; listed?: boolean; tools?: unknown[]; config: { disabledTools?: string[] } }): string {
  if (v.listed === false) return v.state === 'starting' ? 'starting…' : ACTIVE_STATES.includes(v.state) ? 'listing…' : '—';
  if (!v.tools) return '—';
  const off = v.config.disabledTools?.length ?? 0;
  return off ? `${v.tools.length - off}/${v.tools.length}` : String(v.tools.length);
}

export interface StateOf {
  state: string;
  lastError?: string;
  processes?: unknown[];
}

/**
 * serverState is the state to show: the daemon's, except that a server
 * down after a failure (failing, or stopped with its last error and no
 * process) is "failed" — never the grey "stopped" of a server the user
 * stopped. (The daemon keeps the last error until the next failure, so a
 * server the user stopped after a failure still reads failed: Start
 * clears that by running it.)
 */
export function serverState(v: StateOf): string {
  if (v.state === 'failing') return 'failed';
  if (v.state === 'stopped' && v.lastError && (v.processes?.length ?? 0) === 0) return 'failed';
  return v.state;
}

/**
 * failureCause puts the cause of an error first, in words: the daemon's
 * errors nest ("server \"x\" failed to start: exec: \"cmd\": executable file
 * not found in $PATH"), and a cut line would show only the nesting.
 */
export function failureCause(err: string | undefined): string {
  if (!err) return '';
  const notFound =
    /command not found: ([^\s(]+)/i.exec(err) ?? /exec: "([^"]+)": executable file not found/.exec(err) ?? /fork\/exec ([^:]+): no such file or directory/.exec(err);
  if (notFound) return `Command not found: ${notFound[1]}`;
  const denied = /fork\/exec ([^:]+): permission denied/.exec(err);
  if (denied) return `Command not executable (permission denied): ${denied[1]}`;
  return err.replace(/^(server "[^"]*" (failed to start|is failing|crashed)[^:]*: )+/, '').replace(/^exec: /, '') || err;
}

/**
 * liveUsage is a server's CPU and memory while it has processes; a
 * stopped or failed one has none, and its last sample would mislead
 * (it shows "—").
 */
export function liveUsage<U>(v: { processes?: unknown[]; usage?: U }): U | undefined {
  return v.processes?.length ? v.usage : undefined;
}
