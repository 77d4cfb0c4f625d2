/**
 * The consent-graph review record: when each domain was last reviewed, and what content was reviewed.
 * Pure: the store reads and writes `$ACP_HOME/consent-graph.reviews.json`; this validates and updates it.
 */
import type { Issue, Result } from "../issues/index.js";
import { readJson } from "./json-source.js";
import { hashConsentGraph, hashGraphDomain, hashGraphMapping, hashVipContacts } from "./hash.js";
import type { GraphMapping } from "./mapping.js";
import { closestName } from "./suggest.js";
import type { ConsentGraph, GraphDomainReview, GraphReviewRecord } from "./types.js";
import { deepFreeze } from "./validate.js";

/** An empty review record: nothing reviewed yet. */
export function emptyGraphReviewRecord(): GraphReviewRecord {
  return deepFreeze({ version: 1, domains: Object.create(null) as Record<string, GraphDomainReview> });
}

const HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;

function isIsoTime(value: unknown): value is string {
  return typeof value === "string" && value.length <= 64 && !Number.isNaN(Date.parse(value));
}

function readReview(raw: unknown, domain: string, issues: Issue[]): GraphDomainReview | undefined {
  const path = ["domains", domain];
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    issues.push({ code: "invalid_review_record", path, message: `review of \`${domain}\` must be an object` });
    return undefined;
  }
  const r = raw as Record<string, unknown>;
  const { reviewed_at, domain_hash, graph_hash, vip_contacts_hash, review_interval_days, mapping_hash } = r;
  const keys = [
    "reviewed_at",
    "domain_hash",
    "graph_hash",
    "vip_contacts_hash",
    "review_interval_days",
    "mapping_hash",
  ];
  const optionalHash = (value: unknown): boolean =>
    value === undefined || (typeof value === "string" && HASH_PATTERN.test(value));
  const unknown = Object.keys(r).filter((k) => !keys.includes(k));
  if (
    !isIsoTime(reviewed_at) ||
    typeof domain_hash !== "string" ||
    !HASH_PATTERN.test(domain_hash) ||
    typeof graph_hash !== "string" ||
    !HASH_PATTERN.test(graph_hash) ||
    !optionalHash(vip_contacts_hash) ||
    !optionalHash(mapping_hash) ||
    (review_interval_days !== undefined &&
      !(
        typeof review_interval_days === "number" &&
        Number.isFinite(review_interval_days) &&
        review_interval_days > 0
      )) ||
    unknown.length > 0
  ) {
    const message = `review of \`${domain}\` must hold exactly \`reviewed_at\` (ISO-8601), \`domain_hash\`, \`graph_hash\`, \`vip_contacts_hash\`, \`mapping_hash\` (sha256:hex) and \`review_interval_days\` (a number of days)`;
    issues.push({ code: "invalid_review_record", path, message });
    return undefined;
  }
  return {
    reviewed_at,
    domain_hash,
    graph_hash,
    ...(typeof vip_contacts_hash === "string" ? { vip_contacts_hash } : {}),
    ...(typeof review_interval_days === "number" ? { review_interval_days } : {}),
    ...(typeof mapping_hash === "string" ? { mapping_hash } : {}),
  };
}

/** Parses the review record file. An unusable record is an error (the caller treats it as never reviewed). */
export function parseGraphReviewRecord(text: string): Result<GraphReviewRecord> {
  const json = readJson(text, { maxLength: 5 * 1024 * 1024, maxDepth: 8 });
  if (!json.ok) return json;
  const raw = json.value.value;
  const issues: Issue[] = [];
  const fail = (message: string): Result<GraphReviewRecord> => ({
    ok: false,
    issues: [{ code: "invalid_review_record", path: [], message }],
  });
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return fail("a review record must be an object");
  const r = raw as Record<string, unknown>;
  if (r["version"] !== 1) return fail(`unknown review record version ${JSON.stringify(r["version"])} (expected 1)`);
  const rawDomains = r["domains"];
  if (typeof rawDomains !== "object" || rawDomains === null || Array.isArray(rawDomains)) {
    return fail("`domains` must be an object of domain → review");
  }
  const extra = Object.keys(r).filter((k) => k !== "version" && k !== "domains");
  if (extra.length > 0) return fail(`unknown key \`${extra[0] ?? ""}\` in the review record`);
  const domains = Object.create(null) as Record<string, GraphDomainReview>;
  for (const [domain, review] of Object.entries(rawDomains as Record<string, unknown>)) {
    const parsed = readReview(review, domain, issues);
    if (parsed !== undefined) domains[domain] = parsed;
  }
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, value: deepFreeze({ version: 1, domains }) };
}

/** What a review is made under besides the graph: the graph mapping in use. */
export interface GraphReviewSettings {
  /** The graph mapping in use (config.yml `graph.mapping`); absent: none. */
  readonly mapping?: GraphMapping;
}

/**
 * Records a review of `domains` (all domains when empty) at `now`, with the content hashes of what was
 * reviewed and the settings it was made under (`review_interval_days`, the mapping's hash). An unknown
 * domain is an issue with a suggestion; nothing is recorded then.
 */
export function recordGraphReview(
  record: GraphReviewRecord | undefined,
  graph: ConsentGraph,
  domains: readonly string[],
  now: Date,
  settings: GraphReviewSettings = {},
): Result<GraphReviewRecord> {
  if (Number.isNaN(now.getTime())) {
    return { ok: false, issues: [{ code: "invalid_input", path: [], message: "invalid review time" }] };
  }
  const names = domains.length === 0 ? Object.keys(graph.domains) : domains;
  const issues: Issue[] = [];
  for (const name of names) {
    if (Object.hasOwn(graph.domains, name)) continue;
    const near = closestName(name, Object.keys(graph.domains));
    issues.push({
      code: "unknown_domain",
      path: [name],
      message: `unknown domain \`${name}\` in the consent graph`,
      ...(near !== undefined ? { help: `did you mean \`${near}\`` } : {}),
    });
  }
  if (issues.length > 0) return { ok: false, issues };
  const out = Object.create(null) as Record<string, GraphDomainReview>;
  for (const [name, review] of Object.entries(record?.domains ?? {})) out[name] = review;
  const graph_hash = hashConsentGraph(graph);
  const vip_contacts_hash = hashVipContacts(graph.vip_contacts);
  const mapping_hash = hashGraphMapping(settings.mapping);
  const interval = graph.consent_decay?.review_interval_days;
  const reviewed_at = now.toISOString();
  for (const name of names) {
    const domain = graph.domains[name];
    if (domain !== undefined) {
      out[name] = {
        reviewed_at,
        domain_hash: hashGraphDomain(domain),
        graph_hash,
        vip_contacts_hash,
        ...(interval !== undefined ? { review_interval_days: interval } : {}),
        mapping_hash,
      };
    }
  }
  return { ok: true, value: deepFreeze({ version: 1, domains: out }) };
}
