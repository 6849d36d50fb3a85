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
  failing: { label: 'Failing', tone: 'bad', shape: 'cross', hint: 'It crashed too often and stays down until started again.' },
  stopped: { label: 'Stopped', tone: 'idle', shape: 'ring', hint: 'No process runs. It starts on the first call, or with Start.' },
  disabled: { label: 'Disabled', tone: 'idle', shape: 'dash', hint: 'Disabled in the config: it never runs.' },
};

export function stateLook(state: string | undefined): StateLook {
  const s = (state ?? '').toLowerCase();
  return LOOKS[s] ?? { label: s ? s[0].toUpperCase() + s.slice(1) : 'Unknown', tone: 'idle', shape: 'ring', hint: '' };
}
