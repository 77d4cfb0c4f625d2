/**
 * Consent-graph files: the graph itself (read, never written) and the review record
 * `$ACP_HOME/consent-graph.reviews.json` (mode 0600, replaced atomically). The record lives beside the
 * graph, not in it, so the graph file stays exactly as the operator wrote it.
 */
export {
  GRAPH_REVIEWS_FILE,
  MAX_GRAPH_REVIEWS_BYTES,
  graphReviewsPath,
  readGraphReviews,
  writeGraphReviews,
  recordGraphReviewFile,
  type RecordedGraphReview,
} from "./review-file.js";
export {
  consentGraphFileExists,
  loadConsentGraphFile,
  readConsentGraphText,
  type ConsentGraphFile,
} from "./graph-file.js";
