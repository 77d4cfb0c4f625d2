/**
 * A node's clock against the database's. Every node reads its own clock for a consent request's expiry, a
 * session or window approval's end and a rate limit's window, so a node whose clock is off by `s` could
 * honour an ended approval `s` late (behind), write a window that ends `s` late (ahead), or let calls leave
 * a rate limit's window `s` early. The guard bounds `s`: past the limit the node refuses decisions (like a
 * lost database) and is not ready, until the clocks agree again.
 */
import { clockSkewBeyond, describeClockSkew, measureClockSkew, type PostgresStore } from "@acp/store";

/** How often a node compares its clock with the database's (ms), besides at open and on `/readyz`. */
export const CLOCK_SKEW_CHECK_MS = 30_000;

/** The guard's state: the error decisions are refused with while the clocks disagree, else null. */
export interface ClockSkewGuard {
  readonly error: Error | null;
  /** Compares the clocks now; resolves with {@link error} (an unreachable database leaves it as it was). */
  check(): Promise<Error | null>;
  close(): void;
}

/** Options of {@link guardClockSkew}. */
export interface ClockSkewGuardOptions {
  readonly clock: () => Date;
  /** Most skew allowed (ms); 0 or less: never checked. */
  readonly maxMs: number;
  /** One line when the clocks part, one when they agree again. */
  readonly log: (line: string) => void;
}

/** Starts comparing the clocks every {@link CLOCK_SKEW_CHECK_MS} (the timer does not keep the process alive). */
export function guardClockSkew(store: Pick<PostgresStore, "query">, options: ClockSkewGuardOptions): ClockSkewGuard {
  let error: Error | null = null;
  let closed = false;
  const check = async (): Promise<Error | null> => {
    if (options.maxMs <= 0 || closed) return error;
    let reading;
    try {
      reading = await measureClockSkew(store, () => options.clock().getTime());
    } catch {
      return error; // the database does not answer: that is the reachability's to say, and it refuses too
    }
    if (clockSkewBeyond(reading, options.maxMs)) {
      const said = `this node's clock is ${describeClockSkew(reading)} the database's (at most ${options.maxMs} ms allowed)`;
      if (error === null) {
        options.log(`storage: ${said}: decisions are refused (503) until the clocks agree (set the clock: NTP)`);
      }
      error = new Error(said);
    } else if (error !== null) {
      error = null;
      options.log("storage: this node's clock agrees with the database's again");
    }
    return error;
  };
  const timer = options.maxMs > 0 ? setInterval(() => void check(), CLOCK_SKEW_CHECK_MS) : null;
  timer?.unref();
  return {
    get error() {
      return error;
    },
    check,
    close() {
      closed = true;
      if (timer !== null) clearInterval(timer);
    },
  };
}
