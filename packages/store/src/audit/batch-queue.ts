import type { AuditEventInput, AuditEventV02, StagedAuditLines } from "@acp/core";

// The audit writer's queue: calls in arrival order, taken off in batches of at most `maxBatch` events.

/** One queued call: events to write (from `append` or `appendMany`) or a checkpoint. */
export interface Pending {
  readonly kind: "events" | "checkpoint" | "final";
  /** The events, redacted, checked and staged as bytes when they were appended. */
  readonly lines: StagedAuditLines;
  /** How many events `lines` holds. */
  readonly count: number;
  /** For `append`: the redacted input and id, to build the event it resolves with. */
  readonly single: { readonly input: AuditEventInput; readonly id: string } | null;
  readonly timestamp: string;
  /** When it was queued (`performance.now()`), for the commit delay. */
  readonly queuedAt: number;
  /** Whether its caller waits for it: the commit that takes it does not wait for the commit delay. */
  readonly urgent: boolean;
  /** How many of the events earlier batches took (a call larger than a batch is split). */
  taken: number;
  /** With the event (`append`), the checkpoint or `null` (`checkpoint`, `close`), or nothing (`appendMany`). */
  readonly resolve: (event: AuditEventV02 | null | undefined) => void;
  readonly reject: (err: unknown) => void;
}

/** The events `from` to `to` of a queued call, as one batch takes them. */
export interface Slice {
  readonly item: Pending;
  readonly from: number;
  readonly to: number;
}

/**
 * The next batch off the queue: up to `maxBatch` events in queue order, splitting a call that does not
 * fit (its rest stays first in the queue); with `oneCall` (`every` mode) one call only.
 */
export function takeBatch(queue: Pending[], maxBatch: number, oneCall: boolean): Slice[] {
  const slices: Slice[] = [];
  let room = maxBatch;
  let done = 0;
  for (const item of queue) {
    const from = item.taken;
    const to = Math.min(item.count, from + room);
    item.taken = to;
    room -= to - from;
    slices.push({ item, from, to });
    if (to === item.count) done++;
    if (oneCall || room <= 0) break;
  }
  queue.splice(0, done);
  return slices;
}

/** Rejects the calls of a failed batch; the rest of a call split across batches is dropped from the queue. */
export function abandonBatch(queue: Pending[], batch: readonly Slice[], err: unknown): void {
  for (const { item } of batch) {
    item.reject(err);
    if (queue[0] === item) queue.shift();
  }
}
