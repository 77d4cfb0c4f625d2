/** Identifiers read in untrusted content, kept in `state.db` for an agent's later sessions. */
export {
  createProvenanceMemoryStore,
  FORGOTTEN_SOURCE,
  MAX_REMEMBERED_IDENTITIES,
  type ProvenanceMemoryStore,
  type ProvenanceMemoryOptions,
} from "./provenance-memory-store.js";
