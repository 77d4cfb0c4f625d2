/**
 * How evidence refs count. A string ref is a quickstart ref: nothing about it is known, so it reads as
 * trust `unknown`, freshness `unknown`, redaction `unknown` — exactly like a structured ref that omits
 * those fields. A ref is *usable* unless it is known to be stale (`freshness.status: "stale"`) or known
 * to be untrustworthy (`trust_tier: "unverified"`).
 */
import type { EvidenceRef } from "./vocabulary.js";

/** The counts the route rules and the audit record use. */
export interface EvidenceSummary {
  /** Every ref. */
  readonly total: number;
  /** Quickstart string refs. */
  readonly string_refs: number;
  /** Structured refs. */
  readonly structured_refs: number;
  /** Refs that count toward the evidence rules (neither stale nor unverified). */
  readonly usable: number;
  /** Structured refs whose `freshness.status` is `stale`. */
  readonly stale: number;
  /** Structured refs whose `trust_tier` is `unverified`. */
  readonly unverified: number;
  /** Structured refs whose `redaction_status` is `sensitive`. */
  readonly sensitive: number;
  /** Structured refs that are `verified` or `runtime`, and `fresh`: the production standard. */
  readonly verified_fresh: number;
}

/** Indexes of the refs that do not count or need attention, for the reasons a person reads. */
export interface EvidenceAssessment extends EvidenceSummary {
  readonly stale_indexes: readonly number[];
  readonly unverified_indexes: readonly number[];
  readonly sensitive_indexes: readonly number[];
}

/** Whether one ref counts toward the evidence rules. */
export function isUsableEvidence(ref: EvidenceRef): boolean {
  if (typeof ref === "string") return true;
  return ref.freshness?.status !== "stale" && ref.trust_tier !== "unverified";
}

/** Counts the refs of a schema-valid event. */
export function assessEvidence(refs: readonly EvidenceRef[]): EvidenceAssessment {
  const stale: number[] = [];
  const unverified: number[] = [];
  const sensitive: number[] = [];
  let strings = 0;
  let usable = 0;
  let verifiedFresh = 0;
  refs.forEach((ref, index) => {
    if (isUsableEvidence(ref)) usable++;
    if (typeof ref === "string") {
      strings++;
      return;
    }
    if (ref.freshness?.status === "stale") stale.push(index);
    if (ref.trust_tier === "unverified") unverified.push(index);
    if (ref.redaction_status === "sensitive") sensitive.push(index);
    const trusted = ref.trust_tier === "verified" || ref.trust_tier === "runtime";
    if (trusted && ref.freshness?.status === "fresh") verifiedFresh++;
  });
  return {
    total: refs.length,
    string_refs: strings,
    structured_refs: refs.length - strings,
    usable,
    stale: stale.length,
    unverified: unverified.length,
    sensitive: sensitive.length,
    verified_fresh: verifiedFresh,
    stale_indexes: stale,
    unverified_indexes: unverified,
    sensitive_indexes: sensitive,
  };
}

/** The counts alone (what the audit record keeps). */
export function summarizeEvidence(assessment: EvidenceAssessment): EvidenceSummary {
  const { total, string_refs, structured_refs, usable, stale, unverified, sensitive, verified_fresh } = assessment;
  return { total, string_refs, structured_refs, usable, stale, unverified, sensitive, verified_fresh };
}
