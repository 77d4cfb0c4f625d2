import { unsealStagedLine, type AuditEventV02 } from "@acp/core";
import type { Pending, Slice } from "./batch-queue.js";
import { limitViews } from "./byte-runs.js";
import type { ChainPosition } from "./scan-log.js";

/** What sealing a batch produced. */
export interface SealedBatch {
  /** The bytes to write: the batch's lines in order, as runs of staged bytes. */
  readonly chunks: Buffer[];
  /** What each call that completes in this batch resolves with. */
  readonly done: [Pending, AuditEventV02 | null | undefined][];
  /** The last checkpoint line of the batch, for the anchor. */
  readonly anchor: string | null;
  readonly position: ChainPosition;
}

/** Plans sealed one after another, as one. */
export function joinPlans(plans: readonly SealedBatch[], from: ChainPosition): SealedBatch {
  if (plans.length === 1) return plans[0] as SealedBatch;
  let anchor: string | null = null;
  for (const plan of plans) anchor = plan.anchor ?? anchor;
  return {
    chunks: limitViews(plans.flatMap((plan) => plan.chunks)),
    done: plans.flatMap((plan) => plan.done),
    anchor,
    position: plans.at(-1)?.position ?? from,
  };
}

/** Unseals the first `n` lines of a batch's events (all of them with `Infinity`), in order. */
export function unsealSlices(batch: readonly Slice[], n: number): void {
  let left = n;
  for (const { item, from, to } of batch) {
    if (item.kind !== "events") continue;
    for (let k = from; k < to && left > 0; k++, left--) unsealStagedLine(item.lines, k);
  }
}
