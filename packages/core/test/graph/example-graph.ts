import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  createMemoryProposalLedger,
  parseConsentGraph,
  proposalKey,
  recordGraphReview,
  type ConsentGraph,
  type GraphReviewRecord,
  type ProposalLedger,
  type ProposalSubject,
} from "../../src/index.js";

/** Path of the document's own example graph, assembled into one file. */
export const EXAMPLE_GRAPH_PATH = fileURLToPath(
  new URL("../../../../spec/examples/consent-graph.json", import.meta.url),
);

/** The example graph's text, unchanged. */
export const EXAMPLE_GRAPH_TEXT = readFileSync(EXAMPLE_GRAPH_PATH, "utf8");

/** The example graph, parsed. */
export function exampleGraph(): ConsentGraph {
  const result = parseConsentGraph(EXAMPLE_GRAPH_TEXT);
  if (!result.ok) throw new Error(`example graph does not parse: ${JSON.stringify(result.issues)}`);
  return result.value;
}

/** Parses a graph from an object, failing the test when it is invalid. */
export function graphOf(raw: unknown): ConsentGraph {
  const result = parseConsentGraph(JSON.stringify(raw));
  if (!result.ok) throw new Error(`graph does not parse: ${JSON.stringify(result.issues)}`);
  return result.value;
}

/** A review record in which every domain of the graph was reviewed at `at`. */
export function reviewedAt(graph: ConsentGraph, at: Date): GraphReviewRecord {
  const result = recordGraphReview(undefined, graph, [], at);
  if (!result.ok) throw new Error("review failed");
  return result.value;
}

export const NOW = new Date("2026-01-15T12:00:00.000Z");

/** A proposal ledger that first saw each proposal at its own `proposed_at` (one without a valid time: never). */
export function ledgerThatSaw(...subjects: ProposalSubject[]): ProposalLedger {
  const ledger = createMemoryProposalLedger();
  for (const subject of subjects) {
    const at = new Date(subject.proposal?.proposed_at ?? Number.NaN);
    if (!Number.isNaN(at.getTime())) ledger.firstSeen(proposalKey(subject), at);
  }
  return ledger;
}
