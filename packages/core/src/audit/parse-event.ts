import { isSha256Ref } from "../canonical-json/index.js";
import { fail, ok, type Issue, type Result } from "../issues/index.js";
import { AUDIT_EVENT_KIND, AUDIT_EVENT_VERSION, type AuditEventV02 } from "./event.js";
import { isAuditEventType } from "./event-types.js";

/** Longest audit line we parse (1 MiB); a longer line is refused, never buffered further. */
export const MAX_AUDIT_LINE_LENGTH = 1024 * 1024;

/**
 * What a file reader gives for a line whose bytes are not valid UTF-8, which {@link parseAuditLine} refuses
 * (`not_json`). Decoding replaces each invalid sequence by U+FFFD, so the decoded text of such a line can
 * equal that of another byte string (`EF BF BD` and `F0 BF BD` both decode to U+FFFD before a `"`): the
 * hash, computed over the text, would not see the change. It starts with a lone surrogate, which no
 * UTF-8 decoding produces, so it stands for no real line.
 */
export const NOT_UTF8_AUDIT_LINE = "\uDC80 (line is not valid UTF-8)";

const ID = /^ae_[A-Za-z0-9_-]{1,128}$/;
/** An ISO-8601 date-time as an event's `timestamp` (and a checkpoint body's) must be. */
export const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const NULLABLE_STRINGS = ["request_id", "agent", "tool", "category", "risk_level", "decision", "policy_rule"] as const;
const FIELDS: ReadonlySet<string> = new Set([
  "type",
  "version",
  "id",
  "timestamp",
  "event_type",
  ...NULLABLE_STRINGS,
  "response_time_ms",
  "metadata",
  "previous_event_hash",
  "event_hash",
]);

function invalid(path: string, message: string): Issue {
  return { code: "schema_invalid", path: [path], message };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkHeader(event: Record<string, unknown>): Issue | undefined {
  if (event["type"] !== AUDIT_EVENT_KIND) return invalid("type", `\`type\` is not \`${AUDIT_EVENT_KIND}\``);
  if (event["version"] !== AUDIT_EVENT_VERSION) {
    return invalid("version", `unsupported \`version\` (expected \`${AUDIT_EVENT_VERSION}\`)`);
  }
  if (typeof event["id"] !== "string" || !ID.test(event["id"])) return invalid("id", "`id` is not `ae_<unique>`");
  if (typeof event["timestamp"] !== "string" || !ISO_8601.test(event["timestamp"])) {
    return invalid("timestamp", "`timestamp` is not an ISO-8601 date-time");
  }
  if (!isAuditEventType(event["event_type"])) {
    return invalid("event_type", `unknown \`event_type\` \`${String(event["event_type"]).slice(0, 64)}\``);
  }
  return undefined;
}

function checkFields(event: Record<string, unknown>): Issue | undefined {
  for (const key of Object.keys(event)) {
    if (!FIELDS.has(key)) return invalid(key, `unknown field \`${key.slice(0, 64)}\``);
  }
  for (const key of FIELDS) if (!(key in event)) return invalid(key, `missing field \`${key}\``);
  for (const key of NULLABLE_STRINGS) {
    const value = event[key];
    if (value !== null && typeof value !== "string") return invalid(key, `\`${key}\` is not a string or null`);
  }
  const time = event["response_time_ms"];
  if (time !== null && (typeof time !== "number" || !Number.isFinite(time) || time < 0)) {
    return invalid("response_time_ms", "`response_time_ms` is not a non-negative number or null");
  }
  if (!isPlainObject(event["metadata"])) return invalid("metadata", "`metadata` is not an object");
  const previous = event["previous_event_hash"];
  if (previous !== null && !isSha256Ref(previous)) {
    return invalid("previous_event_hash", "`previous_event_hash` is not `sha256:<64 lowercase hex>` or null");
  }
  if (!isSha256Ref(event["event_hash"])) {
    return invalid("event_hash", "`event_hash` is not `sha256:<64 lowercase hex>`");
  }
  return undefined;
}

/**
 * Parses one line of `audit.jsonl` against the §7.4 schema: every field present, no unknown field,
 * known `event_type`, lowercase `sha256:` hashes. Issue codes: `not_json` (the line does not parse as a
 * JSON object, is longer than {@link MAX_AUDIT_LINE_LENGTH} or is {@link NOT_UTF8_AUDIT_LINE}) and `schema_invalid`. Does not check
 * the hash or the chain (nor whether every string is valid I-JSON: hashing refuses lone surrogates);
 * see {@link verifyAuditChain}.
 */
export function parseAuditLine(line: string): Result<AuditEventV02> {
  if (line.length > MAX_AUDIT_LINE_LENGTH) {
    return fail([{ code: "not_json", path: [], message: `line longer than ${MAX_AUDIT_LINE_LENGTH} characters` }]);
  }
  if (line === NOT_UTF8_AUDIT_LINE) return fail([{ code: "not_json", path: [], message: "line is not valid UTF-8" }]);
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return fail([{ code: "not_json", path: [], message: "line is not JSON" }]);
  }
  if (!isPlainObject(value)) return fail([{ code: "not_json", path: [], message: "line is not a JSON object" }]);
  const problem = checkHeader(value) ?? checkFields(value);
  if (problem !== undefined) return fail([problem]);
  return ok(value as unknown as AuditEventV02);
}
