/**
 * How much provenance sessions keep: each session at most {@link MAX_STORE_CHARS}, and the sessions of a
 * process (or of one agent) together at most what a {@link SharedStoreBudget} they share allows. What an
 * entry keeps is counted as its text, its tokens and, for untrusted content, its aliases (`keptChars`).
 */

/** Most characters kept for one session (text, tokens and aliases); beyond it entries are cut and provenance is marked incomplete. */
export const MAX_STORE_CHARS = 64_000_000;

/**
 * Room for provenance text shared by several sessions of one process (an HTTP proxy serving many agents):
 * each session keeps at most {@link MAX_STORE_CHARS} characters, and all of them together at most `max`.
 * Past it, as past a session's own limit, content is no longer kept to trace values to and consequential
 * calls ask. A session that ends gives its share back.
 *
 * A budget may be a share of another (`parent`, {@link createSharedStoreBudget}): the sessions of one agent
 * keep at most their share, and everything kept is counted in the parent too, so one agent reading a lot
 * cannot use up the room every other agent's sessions need.
 */
export interface SharedStoreBudget {
  readonly max: number;
  /** Characters kept by the sessions that share it and have not ended. */
  used: number;
  /** The budget this one is a share of, if any. */
  readonly parent?: SharedStoreBudget;
  /** Whose sessions share it, for the message past its room (`the sessions of this process`). */
  readonly holders?: string;
}

/**
 * A shared budget of `max` characters (see {@link SharedStoreBudget}); with `parent`, a share of that one
 * (kept text counts in both; the room is the smaller of the two), held by `holders`.
 */
export function createSharedStoreBudget(
  max: number,
  options: { readonly parent?: SharedStoreBudget; readonly holders?: string } = {},
): SharedStoreBudget {
  if (!Number.isSafeInteger(max) || max < 0) throw new RangeError(`invalid store budget \`${max}\``);
  return {
    max,
    used: 0,
    ...(options.parent !== undefined ? { parent: options.parent } : {}),
    ...(options.holders !== undefined ? { holders: options.holders } : {}),
  };
}

/** The budget in a share chain with the least room left (the one that limits), and that room. */
export function tightestStoreBudget(budget: SharedStoreBudget): {
  readonly budget: SharedStoreBudget;
  readonly room: number;
} {
  let tightest = budget;
  let room = Math.max(0, budget.max - budget.used);
  for (let b = budget.parent; b !== undefined; b = b.parent) {
    const left = Math.max(0, b.max - b.used);
    if (left < room) {
      room = left;
      tightest = b;
    }
  }
  return { budget: tightest, room };
}

/** Counts `chars` kept (negative: given back) in a budget and every budget it is a share of. */
export function chargeStoreBudget(budget: SharedStoreBudget, chars: number): void {
  for (let b: SharedStoreBudget | undefined = budget; b !== undefined; b = b.parent)
    b.used = Math.max(0, b.used + chars);
}
