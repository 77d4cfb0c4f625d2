/**
 * Counterexamples in the replay format: one JSON object per line, which `acp replay` reads back.
 */
import type { Counterexample, VerifyTraceEvent } from "./types.js";

/** One event as its replay line. */
export function formatTraceEvent(event: VerifyTraceEvent): string {
  return JSON.stringify(event);
}

/** A counterexample as JSON lines (a final newline included). */
export function formatCounterexample(counterexample: Counterexample): string {
  return `${counterexample.events.map(formatTraceEvent).join("\n")}\n`;
}
