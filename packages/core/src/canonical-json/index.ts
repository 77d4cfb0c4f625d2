/** RFC 8785 canonical JSON and the `sha256:` hash references built on it. */
export {
  canonicalJson,
  canonicalJsonBytes,
  tryCanonicalJson,
  sameCanonicalJson,
  MAX_CANONICAL_DEPTH,
  type JsonValue,
} from "./canonical-json.js";
export { sha256Hex, sha256Ref, canonicalSha256Ref, isSha256Ref, SHA256_PREFIX } from "./sha256.js";
