import type { FastifyReply, FastifyRequest } from "fastify";
import { scanFaq, type ContentFinding } from "../content/content-scan.js";
import type { FaqBody } from "../content/faq.js";
import type { SandboxRow } from "../store/claim-store.js";
import { chargeEvent } from "./admission-gate.js";
import type { ClaimRuntime } from "./context.js";

/**
 * The gate every publication and every change to published content passes (§23.2): publication rate limits
 * per sandbox and per source range (publications only), the content scan, and the cross-sandbox similarity
 * check. False when the content may go out; true when it answered instead (429, or 422
 * `claim_content_flagged` naming the category) — a boolean, since a Fastify reply is thenable. A flagged attempt
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
): Promise<boolean> {
  const now = rt.now();
  const facts = rt.facts(req);
  if (publishing) {
    const perSandbox = rt.publishRate.hit(`sandbox:${s.id}`, now);
    const perSource = rt.publishRate.hit(`source:${facts.source}`, now);
    if (perSandbox > rt.publishPerSandboxPerHour || perSource > rt.publishPerSourcePerHour) {
      facts.action = "faq.publish_limited";
      await rt.limited(req, reply);
      return true;
    }
  }
  const common: ContentFinding = {
    kind: "spam",
    message: "the same content is already published from several sandboxes",
  };
  const finding = scanFaq(body) ?? (rt.published.tooCommon(s.id, body, now) ? common : undefined);
  if (finding === undefined) {
    rt.published.record(s.id, body, now);
    return false;
  }
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
  return true;
}
