import {
  createAuditEvent,
  createCheckpointBody,
  createCheckpointInput,
  createStagedAuditLines,
  sealStagedLine,
  signCheckpoint,
  type AuditEventInput,
  type AuditEventV02,
  type AuditLineStager,
  type CheckpointSigner,
} from "@acp/core";
import type { Pending, Slice } from "./batch-queue.js";
import { ByteRuns } from "./byte-runs.js";
import { unsealSlices, type SealedBatch } from "./sealed-batch.js";
import type { ChainPosition } from "./scan-log.js";

/** What sealing needs of the writer. */
export interface Sealer {
  /** A new `ae_<unique>` event id, for the lines the log writes itself. */
  readonly newId: () => string;
  /** Stages the log's own lines (a recovery event, checkpoints). */
  readonly stager: AuditLineStager;
  /** The clock as ISO-8601, for the log's own lines. */
  readonly timestamp: () => string;
  /** Signs checkpoints; without it none is written. */
  readonly signer: CheckpointSigner | undefined;
  /** A signed checkpoint after this many events (default 1000). */
  readonly checkpointEvery: number | undefined;
}

/**
 * Seals the batch's lines where they were staged, checkpoints included, chained after `from`: first the
 * log's own `prefix` events (a torn tail's recovery), then the queued calls' events, a checkpoint every
 * `checkpointEvery` lines and where a call asks for one. Nothing is written yet. If it throws, the lines
 * it sealed are unsealed again.
 */
export function sealBatch(sealer: Sealer, prefix: AuditEventInput[], batch: Slice[], from: ChainPosition): SealedBatch {
  let { count, head, sinceCheckpoint } = from;
  const runs = new ByteRuns();
  const done: [Pending, AuditEventV02 | null | undefined][] = [];
  let anchor: string | null = null;
  const every = Math.max(1, sealer.checkpointEvery ?? 1000);
  /** Stages and seals a log-made event (recovery, checkpoint) now; returns it as written. */
  const own = (input: AuditEventInput, timestamp: string): AuditEventV02 => {
    const id = sealer.newId();
    const previousEventHash = head;
    const lines = createStagedAuditLines();
    sealer.stager.stage(input, id, timestamp, lines);
    const sealed = sealStagedLine(lines, 0, previousEventHash);
    head = sealed;
    count++;
    runs.add(lines, 0);
    if (input.event_type === "checkpoint") {
      sinceCheckpoint = 0;
      anchor = runs.text(lines, 0);
    } else sinceCheckpoint++;
    return createAuditEvent(input, { id, timestamp, previousEventHash }, sealed);
  };
  const checkpoint = (): AuditEventV02 | null => {
    const signer = sealer.signer;
    if (signer === undefined) return null;
    const timestamp = sealer.timestamp();
    const body = createCheckpointBody(head, count, timestamp);
    return own(createCheckpointInput({ body, signature: signCheckpoint(body, signer) }), timestamp);
  };
  let sealedLines = 0;
  try {
    for (const input of prefix) own(input, sealer.timestamp());
    for (const { item, from, to } of batch) {
      if (item.kind !== "events") {
        done.push([item, item.kind === "final" && sinceCheckpoint === 0 ? null : checkpoint()]);
        if (sinceCheckpoint >= every) checkpoint();
        continue;
      }
      const lines = item.lines;
      let previous = head;
      let sealed = "";
      for (let k = from; k < to; k++) {
        previous = head;
        head = sealed = sealStagedLine(lines, k, previous);
        sealedLines++;
        runs.add(lines, k);
        count++;
        if (++sinceCheckpoint >= every) checkpoint();
      }
      if (to < item.count) continue;
      const single = item.single;
      const event =
        single === null
          ? undefined
          : createAuditEvent(
              single.input,
              { id: single.id, timestamp: item.timestamp, previousEventHash: previous },
              sealed,
            );
      done.push([item, event]);
    }
  } catch (err) {
    unsealSlices(batch, sealedLines);
    throw err;
  }
  return {
    chunks: runs.chunks(),
    done,
    anchor,
    position: { size: from.size, count, head, sinceCheckpoint },
  };
}
