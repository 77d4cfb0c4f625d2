/** The signals that stop `acp demo` (and `acp proxy` while it closes), with the exit status a shell reports for a process they end (128 + n). */
const STOP_SIGNALS = { SIGINT: 130, SIGTERM: 143 } as const;

/** SIGINT or SIGTERM. */
export type StopSignal = keyof typeof STOP_SIGNALS;

/** What `listenForStopSignals` needs of the process (the real one by default; a stand-in in tests). */
export interface SignalSource {
  once(event: StopSignal, listener: () => void): unknown;
  off(event: StopSignal, listener: () => void): unknown;
}

/** A SIGINT / SIGTERM turned into an abort the command can clean up after. */
export interface StopSignals {
  /** Aborted by the first SIGINT or SIGTERM. */
  readonly signal: AbortSignal;
  /** The signal that came, and the exit status it calls for (130 after SIGINT, 143 after SIGTERM); undefined while neither came. */
  stoppedBy(): { readonly name: StopSignal; readonly exitStatus: number } | undefined;
  /** Stops listening, so a later signal ends the process the default way. */
  dispose(): void;
}

/**
 * Listens for SIGINT and SIGTERM until `dispose`. The first one aborts `signal` (the demo then closes its
 * child processes and removes its temporary home; a closing proxy stops its upstream servers at once) and stops
 * the listening: a second signal ends the process at once, as a second Ctrl-C should.
 */
export function listenForStopSignals(source: SignalSource = process): StopSignals {
  const controller = new AbortController();
  let received: StopSignal | undefined;
  const listeners = new Map<StopSignal, () => void>();
  const dispose = (): void => {
    for (const [name, listener] of listeners) source.off(name, listener);
    listeners.clear();
  };
  for (const name of Object.keys(STOP_SIGNALS) as StopSignal[]) {
    const listener = (): void => {
      received = name;
      dispose();
      controller.abort(new Error(`stopped by ${name}`));
    };
    listeners.set(name, listener);
    source.once(name, listener);
  }
  return {
    signal: controller.signal,
    stoppedBy: () => (received === undefined ? undefined : { name: received, exitStatus: STOP_SIGNALS[received] }),
    dispose,
  };
}
