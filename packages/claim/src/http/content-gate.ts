import type { FastifyReply, FastifyRequest } from "fastify";
import { scanFaq, type ContentFinding } from "../content/content-scan.js";
import type { FaqBody } from "../content/faq.js";
import type { SandboxRow } from "../store/claim-store.js";
import { chargeEvent } from "./admission-gate.js";
import type { ClaimRuntime } from "./context.js";
import { retryAfterSeconds } from "./failure.js";

/**
 * The gate every publication and every change to published content passes (§23.2): publication rate limits
 * per sandbox and per source range (publications only), the content scan, and the cross-sandbox similarity
 * check. `answered` when it answered instead (429, or 422 `claim_content_flagged` naming the category) — not the
 * reply itself, since a Fastify reply is thenable. Otherwise the content may go out: the caller makes the store
 * write through {@link storeAdmitted}, which keeps the content's similarity record only if the write stored it
 * (a write that failed or was refused must not leave content that was never stored counting against later
 * publications). A flagged attempt
 * raises its source's proof-of-work difficulty by 2 bits for an hour (§11.2 behavioural throttling) and charges the
 * persistent reputation of that source and of the sandbox's creator.
 */
export async function contentGate(
  rt: ClaimRuntime,
  req: FastifyRequest,
  reply: FastifyReply,
  s: SandboxRow,
  body: FaqBody,
  publishing: boolean,
): Promise<GatePass | "answered"> {
  const now = rt.now();
  const facts = rt.facts(req);
  if (publishing) {
    const perSandbox = rt.publishRate.hit(`sandbox:${s.id}`, now);
    const perSource = rt.publishRate.hit(`source:${facts.source}`, now);
    if (perSandbox > rt.publishPerSandboxPerHour || perSource > rt.publishPerSourcePerHour) {
      facts.action = "faq.publish_limited";
      // Both keys are the caller's own (its sandbox, its range): the wait is until both have room.
      const waitMs = Math.max(
        rt.publishRate.waitMs(`sandbox:${s.id}`, rt.publishPerSandboxPerHour, now),
        rt.publishRate.waitMs(`source:${facts.source}`, rt.publishPerSourcePerHour, now),
      );
      await rt.limited(req, reply, retryAfterSeconds(waitMs));
      return "answered";
    }
  }
  const common: ContentFinding = {
    kind: "spam",
    message: "the same content is already published from several sandboxes",
  };
  const finding = scanFaq(body) ?? (rt.published.tooCommon(s.id, body, now) ? common : undefined);
  // Recorded now, before the write (a concurrent publication of the same content already counts it); dropped
  // again by `storeAdmitted` unless the write stores it.
  if (finding === undefined) return { release: rt.published.record(s.id, body, now) };
  facts.action = publishing ? "faq.publish_flagged" : "faq.update_flagged";
  rt.admission.recordContentAbuse(facts.source, now);
  // Persistent too (§11.2): this range, and the range and issuer subject that created the sandbox.
  await chargeEvent(rt, req, "content_flagged", now, s.id);
  void reply
    .code(422)
    .header("cache-control", "no-store")
    .send({
      error: { code: "claim_content_flagged", kind: finding.kind, message: `content refused: ${finding.message}` },
    });
  return "answered";
}

/** Content the gate let through, with the similarity record it made for it. */
export interface GatePass {
  /** Drops the similarity record (the write did not store the content). */
  readonly release: () => void;
}

/** A pass for a write the gate does not see (a draft: nothing recorded). */
export const NO_GATE: GatePass = { release: () => undefined };

/**
 * Makes the store write the gate admitted. `stored` says whether its result means the content was stored; when
 * it was not, or the write throws, the pass is released (and the error rethrown).
 */
export async function storeAdmitted<T>(pass: GatePass, write: () => Promise<T>, stored: (r: T) => boolean): Promise<T> {
  let r: T;
  try {
    r = await write();
  } catch (e) {
    pass.release();
    throw e;
  }
  if (!stored(r)) pass.release();
  return r;
}
