/**
 * The audit appends of one turn of the event loop, handed to the log as one `appendMany`: one promise,
 * one queue entry and no event object per decision. Order is kept (every append of the service goes
 * through here), and each append's promise settles when its whole group is durable.
 */
import type { AuditEventInput } from "@acp/core";

/** What the batcher writes to: the JSONL writer of `@acp/store`. */
export interface ManyAppender {
  appendMany(inputs: readonly AuditEventInput[]): Promise<void>;
  append(input: AuditEventInput): Promise<unknown>;
  flush(): Promise<void>;
}

/** The batcher. */
export interface BatchedAppender {
  /** Queues the event; the promise (shared by the group) settles when the group is durable. */
  append(input: AuditEventInput): Promise<void>;
  /** Hands any queued group to the log now and resolves when everything appended so far is durable. */
  flush(): Promise<void>;
}

/** A group larger than this goes to the log at once (one `appendMany` is then one write of the log). */
export const MAX_GROUP = 1024;

interface Group {
  readonly inputs: AuditEventInput[];
  readonly done: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

function newGroup(): Group {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const done = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { inputs: [], done, resolve, reject };
}

/**
 * Batches appends until the event loop's check phase (`setImmediate`), or {@link MAX_GROUP} of them.
 * When a group is refused as a whole (an event the log will not take), its events are appended one by
 * one, so the others are still written and only the refused one's promise rejects.
 */
export function createBatchedAppender(log: ManyAppender): BatchedAppender {
  let open: Group | null = null;

  function hand(group: Group): void {
    if (open === group) open = null;
    log.appendMany(group.inputs).then(group.resolve, () => {
      // nothing of a refused group is written (it is one write of the log): find the refused event
      Promise.all(group.inputs.map((input) => log.append(input))).then(() => group.resolve(), group.reject);
    });
  }

  return {
    append(input) {
      let group = open;
      if (group === null) {
        group = open = newGroup();
        const g = group;
        setImmediate(() => {
          if (open === g) hand(g);
        });
      }
      group.inputs.push(input);
      if (group.inputs.length >= MAX_GROUP) hand(group);
      return group.done;
    },
    async flush() {
      const group = open;
      if (group !== null) {
        hand(group);
        await group.done.catch(() => undefined);
      }
      await log.flush();
    },
  };
}
