/**
 * Consent decay: when `consent_decay.enabled`, an autonomous tier whose domain was not reviewed within
 * `review_interval_days` behaves as requires_approval. A domain never reviewed, reviewed in the future,
 * or changed since its last review (its content hash differs, or the VIP contacts' hash does) counts as not
 * reviewed; so does one made under other settings (another `review_interval_days`, another graph mapping).
 */
import { hashGraphDomain, hashGraphMapping, hashVipContacts } from "./hash.js";
import { DEFAULT_CLOCK_SKEW_SECONDS } from "./trusted-channel.js";
import type { ConsentGraph, GraphContext, GraphDomain, GraphReason } from "./types.js";

const DAY_MS = 24 * 60 * 60 * 1000;

/** A path as one shell word: as it is when plain, else in single quotes. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/** The command that re-approves a domain, naming the graph file when it is not the home's. */
function reviewCommand(name: string, graphFile: string | undefined): string {
  return `acp graph review ${name}${graphFile !== undefined ? ` --graph ${shellWord(graphFile)}` : ""}`;
}

/** Returns the decay reason when the domain's autonomous tier has decayed, else null. */
export function checkConsentDecay(
  graph: ConsentGraph,
  name: string,
  domain: GraphDomain,
  context: GraphContext,
): GraphReason | null {
  const decay = graph.consent_decay;
  if (decay === undefined || !decay.enabled) return null;
  const days = decay.review_interval_days;
  const decayed = (why: string): GraphReason => ({
    code: "consent_decayed",
    message: `autonomous actions of \`${name}\` decayed to requires approval: ${why} (run \`${reviewCommand(name, context.graphFile)}\` to re-approve)`,
  });
  const reviews = context.reviews?.domains;
  const review = reviews !== undefined && Object.hasOwn(reviews, name) ? reviews[name] : undefined;
  if (review === undefined) return decayed("the domain has never been reviewed");
  const at = Date.parse(review.reviewed_at);
  if (Number.isNaN(at)) return decayed("its review record has no valid time");
  if (review.domain_hash !== hashGraphDomain(domain)) {
    return decayed(`the domain changed since its last review at ${review.reviewed_at}`);
  }
  // who counts as a VIP decides what a send may do (the mapping's `recipient_vip`): part of what was reviewed
  if (review.vip_contacts_hash === undefined) {
    return decayed(`its review at ${review.reviewed_at} did not record the VIP contacts it covered`);
  }
  if (review.vip_contacts_hash !== hashVipContacts(graph.vip_contacts)) {
    return decayed(`the VIP contacts changed since its last review at ${review.reviewed_at}`);
  }
  // a review holds for the interval it was made under: lengthening the interval stretches no old review
  if (review.review_interval_days !== days) {
    const was =
      review.review_interval_days === undefined
        ? "no review interval"
        : `a ${review.review_interval_days}-day interval`;
    return decayed(`its review at ${review.reviewed_at} was made under ${was}, and the interval is now ${days} days`);
  }
  // which calls reach this domain, and as which action (the mapping, config.yml graph.mapping): part of what was reviewed
  if (review.mapping_hash === undefined) {
    return decayed(`its review at ${review.reviewed_at} did not record the graph mapping it covered`);
  }
  if (review.mapping_hash !== hashGraphMapping(context.reviewedMapping)) {
    return decayed(`the graph mapping (graph.mapping) changed since its last review at ${review.reviewed_at}`);
  }
  const now = context.now.getTime();
  const skew = (context.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS) * 1000;
  if (at > now + skew) return decayed(`its last review (${review.reviewed_at}) is in the future`);
  if (!(now - at <= days * DAY_MS)) {
    return decayed(`it was last reviewed at ${review.reviewed_at}, more than ${days} days ago`);
  }
  return null;
}
