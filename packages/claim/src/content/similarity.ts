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
  private readonly seen = new Map<string, Map<string, number>>();
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
    for (const [id, t] of by) if (id !== sandboxId && nowMs - t < this.windowMs) others++;
    return others >= this.maxSandboxes;
  }

  /** Records a publication. */
  record(sandboxId: string, body: FaqBody, nowMs: number): void {
    if (body.questions.length === 0) return;
    const fp = PublishedContentIndex.fingerprint(body);
    const by = this.seen.get(fp) ?? new Map<string, number>();
    by.set(sandboxId, nowMs);
    this.seen.set(fp, by);
    // Amortised: a sweep on every new fingerprint past the bound scanned every recorded one, and each edit of
    // published content records one (500 requests per sandbox per hour), so a few hundred sandboxes made it quadratic.
    if (this.seen.size > this.pruneAt) {
      this.prune(nowMs);
      this.pruneAt = Math.max(MAX_FINGERPRINTS, 2 * this.seen.size);
    }
  }

  /** How many fingerprints are held. */
  get size(): number {
    return this.seen.size;
  }

  /** Drops sandboxes whose publication is older than the window, and fingerprints left with none. */
  protected prune(nowMs: number): void {
    for (const [fp, by] of this.seen) {
      for (const [id, t] of by) if (nowMs - t >= this.windowMs) by.delete(id);
      if (by.size === 0) this.seen.delete(fp);
    }
  }
}
