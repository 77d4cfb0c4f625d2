/**
 * Schema validation of Agent Action Contract v1 events with ajv, compiled once from the canonical
 * schema. Ajv's errors become {@link Issue}s with stable codes, paths and house-style messages.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { fail, ok, ValidationError, type Issue, type Result } from "../issues/index.js";
import { closestWord } from "./closest-word.js";
import { findNonCanonical } from "./i-json.js";
import { CONTRACT_JSON_SCHEMA } from "./schema.js";
import { CONTRACT_SCHEMA_VERSION, type ContractEvent } from "./vocabulary.js";

/** At most this many issues are reported for one event; the rest are summarised in one more issue. */
export const MAX_CONTRACT_ISSUES = 50;

/** In the detailed pass, only this many evidence refs are examined (the issue list is capped anyway). */
const DETAIL_EVIDENCE_LIMIT = 256;

let fastValidator: ValidateFunction | undefined;
let detailValidator: ValidateFunction | undefined;

/** Stops at the first error: the common, valid case costs one linear pass. */
function fast(): ValidateFunction {
  fastValidator ??= new Ajv2020({ allErrors: false, verbose: true, strict: true }).compile(CONTRACT_JSON_SCHEMA);
  return fastValidator;
}

/** Collects every error, for the issue list of an event already known to be invalid. */
function detailed(): ValidateFunction {
  detailValidator ??= new Ajv2020({ allErrors: true, verbose: true, strict: true }).compile(CONTRACT_JSON_SCHEMA);
  return detailValidator;
}

/** The event with its evidence refs cut to {@link DETAIL_EVIDENCE_LIMIT}, so hostile input stays cheap. */
function forDetail(event: unknown): unknown {
  if (typeof event !== "object" || event === null || Array.isArray(event)) return event;
  const refs = (event as { evidence_refs?: unknown }).evidence_refs;
  if (!Array.isArray(refs) || refs.length <= DETAIL_EVIDENCE_LIMIT) return event;
  return { ...event, evidence_refs: refs.slice(0, DETAIL_EVIDENCE_LIMIT) };
}

/** Codes for enum failures on the fields whose unknown values must fail closed by name. */
const ENUM_CODES: ReadonlyMap<unknown, string> = new Map([
  ["tool_category", "unknown_tool_category"],
  ["authorization_state", "unknown_authorization_state"],
  ["risk_domain", "unknown_risk_domain"],
  ["recommended_route", "unknown_route"],
]);

const ENUM_NOUNS: ReadonlyMap<unknown, string> = new Map([
  ["tool_category", "tool category"],
  ["authorization_state", "authorization state"],
  ["risk_domain", "risk domain"],
  ["recommended_route", "route"],
  ["kind", "evidence kind"],
  ["trust_tier", "trust tier"],
  ["redaction_status", "redaction status"],
  ["status", "freshness status"],
  ["subject_type", "subject type"],
]);

function pointerToPath(pointer: string): (string | number)[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((part) => (/^(0|[1-9][0-9]*)$/.test(part) ? Number(part) : part));
}

/** A short, safe rendering of user input for a message (long values are cut). */
export function showValue(value: unknown): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  return `\`${shown.replace(/`/g, "'").replace(/[\r\n]/g, " ")}\``;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  const type = typeof value;
  return type === "object" || type === "undefined" ? `an ${type}` : `a ${type}`;
}

function isEvidenceItem(path: readonly (string | number)[]): boolean {
  return path.length === 2 && path[0] === "evidence_refs";
}

function listAllowed(values: readonly unknown[]): string {
  const words = values.map(String);
  if (words.length <= 1) return words.join("");
  return `${words.slice(0, -1).join(", ")} or ${words[words.length - 1] ?? ""}`;
}

function typeIssue(error: ErrorObject, path: (string | number)[]): Issue {
  const expected = String((error.params as { type?: unknown }).type);
  if (path.length === 0) {
    return {
      code: "contract_not_object",
      path,
      message: `event must be a JSON object, got ${describeType(error.data)}`,
    };
  }
  if (isEvidenceItem(path)) {
    const message = `evidence ref must be a non-empty string or an object, got ${describeType(error.data)}`;
    return { code: "contract_wrong_type", path, message };
  }
  const article = expected === "object" || expected === "array" ? "an" : "a";
  return {
    code: "contract_wrong_type",
    path,
    message: `expected ${article} ${expected}, got ${describeType(error.data)}`,
  };
}

function enumIssue(error: ErrorObject, path: (string | number)[]): Issue {
  const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues ?? [];
  const code = (path.length === 1 ? ENUM_CODES.get(path[0]) : undefined) ?? "contract_invalid_value";
  const noun = ENUM_NOUNS.get(path[path.length - 1]) ?? "value";
  const message = `unknown ${noun} ${showValue(error.data)} (expected ${listAllowed(allowed)})`;
  const guess = typeof error.data === "string" ? closestWord(error.data, allowed.map(String)) : undefined;
  return guess === undefined ? { code, path, message } : { code, path, message, help: `did you mean \`${guess}\`` };
}

function propertyIssue(error: ErrorObject, path: (string | number)[], known: readonly string[]): Issue {
  const name = String((error.params as { additionalProperty?: unknown }).additionalProperty);
  const fieldPath = [...path, name];
  const message = `unknown field ${showValue(name)}`;
  const guess = closestWord(name, known);
  if (guess !== undefined)
    return { code: "contract_unknown_field", path: fieldPath, message, help: `did you mean \`${guess}\`` };
  return { code: "contract_unknown_field", path: fieldPath, message };
}

function knownProperties(error: ErrorObject): string[] {
  const schema = error.parentSchema as { properties?: Record<string, unknown> } | undefined;
  return Object.keys(schema?.properties ?? {});
}

/** Turns one ajv error into an issue; undefined for errors that only echo another (`if`). */
function toIssue(error: ErrorObject): Issue | undefined {
  const path = pointerToPath(error.instancePath);
  switch (error.keyword) {
    case "if":
      return undefined;
    case "type":
      return typeIssue(error, path);
    case "required": {
      const field = String((error.params as { missingProperty?: unknown }).missingProperty);
      return { code: "contract_missing_field", path: [...path, field], message: `missing required field \`${field}\`` };
    }
    case "additionalProperties":
      return propertyIssue(error, path, knownProperties(error));
    case "enum":
      return enumIssue(error, path);
    case "const": {
      const message = `unsupported schema version ${showValue(error.data)} (this gate negotiates only \`${CONTRACT_SCHEMA_VERSION}\`)`;
      return { code: "unsupported_schema_version", path, message };
    }
    case "minLength":
      return {
        code: "contract_empty_string",
        path,
        message: isEvidenceItem(path) ? "evidence ref must not be an empty string" : "must not be an empty string",
      };
    default:
      return { code: "contract_invalid", path, message: error.message ?? `fails \`${error.keyword}\`` };
  }
}

/**
 * Maps ajv errors to issues: a type error at a path hides the enum/const/length errors at that path
 * (decided on paths alone, so the cost stays linear), and only the first {@link MAX_CONTRACT_ISSUES}
 * become issues; the rest are counted.
 */
function toIssues(errors: readonly ErrorObject[]): Issue[] {
  const relevant = errors.filter((e) => e.keyword !== "if");
  const typed = new Set(relevant.filter((e) => e.keyword === "type").map((e) => e.instancePath));
  const kept = relevant.filter((e) => e.keyword === "type" || !typed.has(e.instancePath));
  const issues = kept
    .slice(0, MAX_CONTRACT_ISSUES)
    .map(toIssue)
    .filter((issue): issue is Issue => issue !== undefined);
  if (kept.length <= MAX_CONTRACT_ISSUES) return issues;
  const more = kept.length - MAX_CONTRACT_ISSUES;
  return [...issues, { code: "contract_too_many_issues", path: [], message: `${more} more issues not shown` }];
}

/**
 * The JSON form of a value, read once: getters, proxies and `toJSON` run here and nowhere later, so
 * what is validated is exactly what is decided on (and what goes on the wire).
 */
function jsonSnapshot(value: unknown): Result<unknown> {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    const why = err instanceof RangeError ? "nested too deeply" : err instanceof Error ? err.message : String(err);
    return fail([{ code: "contract_not_json", path: [], message: `event has no JSON form: ${why}` }]);
  }
  if (text === undefined) {
    return fail([
      { code: "contract_not_object", path: [], message: `event must be a JSON object, got ${describeType(value)}` },
    ]);
  }
  return ok(JSON.parse(text) as unknown);
}

/**
 * Validates a value that is already its own JSON form (a snapshot, or a fresh parse that is one): the
 * schema, then what the schema cannot say (I-JSON, arguments with a canonical form and exact numbers).
 */
function validateJsonForm(value: unknown): Result<ContractEvent> {
  const first = fast();
  if (first(value)) {
    const event = value as ContractEvent;
    const problem = findNonCanonical(event as unknown as Readonly<Record<string, unknown>>);
    return problem === undefined ? ok(event) : fail([problem]);
  }
  const all = detailed();
  const issues = all(forDetail(value)) ? [] : toIssues(all.errors ?? []);
  if (issues.length > 0) return fail(issues);
  // The problem lies beyond the refs examined in detail: report the first error the fast pass found.
  const fallback = toIssues(first.errors ?? []);
  if (fallback.length > 0) return fail(fallback);
  return fail([{ code: "contract_invalid", path: [], message: "event does not match the v1 schema" }]);
}

function validationFailed(err: unknown): Result<ContractEvent> {
  const message = `event could not be validated: ${err instanceof Error ? err.message : String(err)}`;
  return fail([{ code: "contract_invalid", path: [], message }]);
}

/**
 * Validates a value against the Agent Action Contract v1 schema. Never throws: any value gives a
 * result, and a failure lists every problem (up to {@link MAX_CONTRACT_ISSUES}) with its path.
 * The value is judged in its JSON form; on success the returned event is that fresh copy, so later
 * changes to the caller's object cannot alter what was checked.
 */
export function validateContractEvent(event: unknown): Result<ContractEvent> {
  try {
    const snapshot = jsonSnapshot(event);
    if (!snapshot.ok) return snapshot;
    return validateJsonForm(snapshot.value);
  } catch (err) {
    return validationFailed(err);
  }
}

/** How deep {@link isOwnJsonForm} looks; a deeper value takes the snapshot (which words a depth error). */
const OWN_FORM_MAX_DEPTH = 64;

function isOwnJsonValue(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      // JSON.parse gives Infinity for `1e999` and -0 for `-0`; their JSON forms are null and 0
      return Number.isFinite(value) && !Object.is(value, -0);
    case "object":
      return value === null || isOwnJsonContainer(value, depth);
    default:
      return false;
  }
}

function isOwnJsonContainer(value: object, depth: number): boolean {
  if (depth >= OWN_FORM_MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    for (let i = 0; i < value.length; i++) if (!isOwnJsonValue(value[i], depth + 1)) return false;
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key in value) {
    if (!isOwnJsonValue((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

/**
 * Whether a value fresh from `JSON.parse` equals its own JSON snapshot, `JSON.parse(JSON.stringify(v))`:
 * an object of plain objects and arrays (JSON.parse's prototypes), strings, booleans, null and finite
 * numbers other than -0, at most {@link OWN_FORM_MAX_DEPTH} deep. Only for parsed values: a getter,
 * proxy or `toJSON` is not looked for (JSON.parse makes none).
 */
function isOwnJsonForm(value: unknown): boolean {
  return typeof value === "object" && value !== null && isOwnJsonContainer(value, 0);
}

/**
 * {@link validateContractEvent} for a value the caller has just parsed from JSON text and owns (an
 * HTTP body): when the value is its own JSON snapshot (see {@link isOwnJsonForm}) it is validated in
 * place, without the copy, and on success the returned event is the value itself; anything else takes
 * the snapshot. Same verdicts and the same issues as {@link validateContractEvent} for such a value;
 * the caller must not change it afterwards.
 */
export function validateParsedContractEvent(event: unknown): Result<ContractEvent> {
  try {
    if (isOwnJsonForm(event)) return validateJsonForm(event);
    const snapshot = jsonSnapshot(event);
    if (!snapshot.ok) return snapshot;
    return validateJsonForm(snapshot.value);
  } catch (err) {
    return validationFailed(err);
  }
}

/** Like {@link validateContractEvent} but throws a {@link ValidationError} on an invalid event. */
export function assertContractEvent(event: unknown): ContractEvent {
  const result = validateContractEvent(event);
  if (!result.ok) throw new ValidationError("invalid action contract event", result.issues);
  return result.value;
}
