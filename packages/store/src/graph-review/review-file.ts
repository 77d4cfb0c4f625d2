import { mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  emptyGraphReviewRecord,
  parseGraphReviewRecord,
  recordGraphReview,
  type ConsentGraph,
  type GraphReviewRecord,
  type GraphReviewSettings,
  type Result,
} from "@acp/core";
import { NotRegularFileError, readFileUpTo } from "../home/read-up-to.js";
import { replaceFileAtomic } from "./atomic-replace.js";

/** The review record's file name inside `$ACP_HOME`. */
export const GRAPH_REVIEWS_FILE = "consent-graph.reviews.json";
/** Largest review record read; larger is refused as absurd. */
export const MAX_GRAPH_REVIEWS_BYTES = 5 * 1024 * 1024;

/** `$ACP_HOME/consent-graph.reviews.json`. */
export function graphReviewsPath(home: string): string {
  return join(home, GRAPH_REVIEWS_FILE);
}

function isMissing(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === "ENOENT";
}

function unreadable(path: string, reason: string): Result<GraphReviewRecord> {
  const message = `cannot read review record \`${path}\`: ${reason}`;
  return { ok: false, issues: [{ code: "review_record_unreadable", path: [], message }] };
}

/**
 * Reads the review record. A missing file is an empty record (nothing reviewed). A file that is there and
 * cannot be read (a directory, no permission) is the issue `review_record_unreadable`, an I/O failure; an
 * oversized or malformed one is `invalid_review_record`. Callers checking decay treat either as never reviewed.
 */
export function readGraphReviews(path: string): Result<GraphReviewRecord> {
  try {
    const stat = statSync(path);
    if (!stat.isFile()) return unreadable(path, "not a file");
    // read with the same bound, on the file opened (not a pipe swapped in, not a file grown since the stat)
    const bytes =
      stat.size > MAX_GRAPH_REVIEWS_BYTES
        ? undefined
        : readFileUpTo(path, MAX_GRAPH_REVIEWS_BYTES, { regularOnly: true });
    if (bytes === undefined) {
      const size = stat.size > MAX_GRAPH_REVIEWS_BYTES ? `${stat.size}` : `more than ${MAX_GRAPH_REVIEWS_BYTES}`;
      const message = `review record \`${path}\` is ${size} bytes (limit ${MAX_GRAPH_REVIEWS_BYTES})`;
      return { ok: false, issues: [{ code: "invalid_review_record", path: [], message }] };
    }
    return parseGraphReviewRecord(bytes.toString("utf8"));
  } catch (err) {
    if (err instanceof NotRegularFileError) return unreadable(path, "not a file");
    if (isMissing(err)) return { ok: true, value: emptyGraphReviewRecord() };
    const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
    return unreadable(path, typeof code === "string" ? code : err instanceof Error ? err.message : String(err));
  }
}

/** Writes the review record atomically (temporary file + rename), mode 0600, creating the home if needed. */
export function writeGraphReviews(path: string, record: GraphReviewRecord): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  replaceFileAtomic(path, `${JSON.stringify(record, null, 2)}\n`, 0o600);
}

/** What `recordGraphReviewFile` recorded. */
export interface RecordedGraphReview {
  readonly record: GraphReviewRecord;
  /** The domains reviewed now. */
  readonly domains: readonly string[];
}

/**
 * Records a review of `domains` (all when empty) at `now` in the record file, bound to `settings` (the graph
 * mapping in use). An unknown domain or a malformed existing record is an issue and nothing is written.
 */
export function recordGraphReviewFile(
  path: string,
  graph: ConsentGraph,
  domains: readonly string[],
  now: Date,
  settings: GraphReviewSettings = {},
): Result<RecordedGraphReview> {
  const existing = readGraphReviews(path);
  if (!existing.ok) return existing;
  const updated = recordGraphReview(existing.value, graph, domains, now, settings);
  if (!updated.ok) return updated;
  writeGraphReviews(path, updated.value);
  const reviewed = domains.length === 0 ? Object.keys(graph.domains) : [...domains];
  return { ok: true, value: { record: updated.value, domains: reviewed } };
}
