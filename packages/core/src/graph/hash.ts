/**
 * Content hashes of a graph and of its domains: `sha256:` + hex of the RFC 8785 canonical JSON.
 * A review records them, so a review counts only for the content that was reviewed.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "./canonical-json.js";
import type { GraphMapping } from "./mapping.js";
import { normalizeRecipient } from "./recipients.js";
import type { ConsentGraph, GraphDomain } from "./types.js";

/** The graph in its file layout: the domains beside `vip_contacts` and `consent_decay`. */
export function consentGraphToJson(graph: ConsentGraph): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, domain] of Object.entries(graph.domains)) out[name] = domain;
  out["vip_contacts"] = graph.vip_contacts;
  if (graph.consent_decay !== undefined) out["consent_decay"] = graph.consent_decay;
  return out;
}

function sha256OfCanonical(value: unknown): string {
  return `sha256:${createHash("sha256").update(canonicalJson(value), "utf8").digest("hex")}`;
}

const graphHashes = new WeakMap<ConsentGraph, string>();
const domainHashes = new WeakMap<GraphDomain, string>();

/** `sha256:<hex>` of the canonical JSON of the whole graph (missing tier lists count as `[]`). */
export function hashConsentGraph(graph: ConsentGraph): string {
  let hash = graphHashes.get(graph);
  if (hash === undefined) {
    hash = sha256OfCanonical(consentGraphToJson(graph));
    if (Object.isFrozen(graph)) graphHashes.set(graph, hash);
  }
  return hash;
}

/** `sha256:<hex>` of the canonical JSON of one domain (missing tier lists count as `[]`). */
export function hashGraphDomain(domain: GraphDomain): string {
  let hash = domainHashes.get(domain);
  if (hash === undefined) {
    hash = sha256OfCanonical(domain);
    if (Object.isFrozen(domain)) domainHashes.set(domain, hash);
  }
  return hash;
}

const vipHashes = new WeakMap<object, string>();

/**
 * `sha256:<hex>` of the canonical JSON of the VIP contacts' values as the graph matches them: normalised
 * (`normalizeRecipient`), without repeats, sorted. Contact names are not in it (they are never accepted as
 * recipients), nor order or spelling of one address; any other change (a contact added or removed, a value
 * changed, a look-alike letter) changes it.
 */
export function hashVipContacts(vipContacts: Readonly<Record<string, string>>): string {
  let hash = vipHashes.get(vipContacts);
  if (hash === undefined) {
    const values = [...new Set(Object.values(vipContacts).map(normalizeRecipient))].sort();
    hash = sha256OfCanonical(values);
    if (Object.isFrozen(vipContacts)) vipHashes.set(vipContacts, hash);
  }
  return hash;
}

const mappingHashes = new WeakMap<object, string>();

/**
 * `sha256:<hex>` of the canonical JSON of the graph mapping (config.yml `graph.mapping`) as validated: its
 * entries in order (the first that matches wins, so order is part of it). No mapping is `[]`. Any change to
 * an entry, a refinement or the order changes it: which calls reach which domain is part of a review.
 */
export function hashGraphMapping(mapping: GraphMapping | undefined): string {
  const entries = mapping ?? [];
  let hash = mappingHashes.get(entries);
  if (hash === undefined) {
    hash = sha256OfCanonical(entries);
    if (Object.isFrozen(entries)) mappingHashes.set(entries, hash);
  }
  return hash;
}
