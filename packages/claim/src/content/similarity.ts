import { createHash } from "node:crypto";
import type { FaqBody } from "./faq.js";
import { normalizeText } from "./content-scan.js";

/** Past this many fingerprints the index is swept (then again each time it has doubled). */
const MAX_FINGERPRINTS = 50_000;

/**
 * Content similarity across sandboxes (§23.3 "content similarity (spam detection)"): a fingerprint of each
 * published FAQ's normalised questions and answers, and which sandboxes published it recently. The same
 * content published from more than `maxSandboxes` sandboxes within `windowMs` is mass hosting, refused as
 * spam. In memory, per node; bounded by pruning old entries.
 */
export class PublishedContentIndex {
  private readonly seen = new Map<string, Map<string, { readonly at: number }>>();
  private pruneAt = MAX_FINGERPRINTS;

  /** At most `maxSandboxes` sandboxes may publish the same content within `windowMs`. */
  constructor(
    private readonly maxSandboxes = 3,
    private readonly windowMs = 24 * 3_600_000,
  ) {}

  /** The fingerprint: SHA-256 of the normalised question/answer text (titles and slugs may vary). */
  static fingerprint(body: FaqBody): string {
    const text = body.questions.map((q) => `${normalizeText(q.question)}\n${normalizeText(q.answer)}`).join("\n\n");
    return createHash("sha256").update(text).digest("hex");
  }

  /** Whether publishing `body` from `sandboxId` now would exceed the limit (other sandboxes only count). */
  tooCommon(sandboxId: string, body: FaqBody, nowMs: number): boolean {
    if (body.questions.length === 0) return false;
    const by = this.seen.get(PublishedContentIndex.fingerprint(body));
    if (by === undefined) return false;
    let others = 0;
    for (const [id, t] of by) if (id !== sandboxId && nowMs - t.at < this.windowMs) others++;
    return others >= this.maxSandboxes;
  }

  /**
   * Records a publication, at once (so a concurrent publication of the same content from another sandbox
   * already counts it). Returns the undo: the caller calls it when the store write it admitted did not commit,
   * so content that was never stored is not held (and does not flag later publications). The undo puts back
   * what this sandbox had recorded for the content before, and is a no-op once a later record replaced this one.
   */
  record(sandboxId: string, body: FaqBody, nowMs: number): () => void {
    if (body.questions.length === 0) return () => undefined;
    const fp = PublishedContentIndex.fingerprint(body);
    const by = this.seen.get(fp) ?? new Map<string, { readonly at: number }>();
    const before = by.get(sandboxId);
    const mark = { at: nowMs }; // compared by identity: an undo never removes a later record
    by.set(sandboxId, mark);
    this.seen.set(fp, by);
    // Amortised: a sweep on every new fingerprint past the bound scanned every recorded one, and each edit of
    // published content records one (500 requests per sandbox per hour), so a few hundred sandboxes made it quadratic.
    if (this.seen.size > this.pruneAt) {
      this.prune(nowMs);
      this.pruneAt = Math.max(MAX_FINGERPRINTS, 2 * this.seen.size);
    }
    return () => {
      const held = this.seen.get(fp);
      if (held === undefined || held.get(sandboxId) !== mark) return;
      if (before === undefined) held.delete(sandboxId);
      else held.set(sandboxId, before);
      if (held.size === 0) this.seen.delete(fp);
    };
  }

  /** How many fingerprints are held. */
  get size(): number {
    return this.seen.size;
  }

  /** Drops sandboxes whose publication is older than the window, and fingerprints left with none. */
  protected prune(nowMs: number): void {
    for (const [fp, by] of this.seen) {
      for (const [id, t] of by) if (nowMs - t.at >= this.windowMs) by.delete(id);
      if (by.size === 0) this.seen.delete(fp);
    }
  }
}
