import { isWellFormedString } from "../audit/audit-json.js";
import type { Issue, Result } from "../issues/index.js";
import { CATEGORIES, RISK_LEVELS, findUnreadableName, type ActionRequest } from "../request/index.js";

/** Limits on one action request; anything beyond is refused, never evaluated. */
export const REQUEST_LIMITS = {
  /** Longest tool, server or agent name. */
  maxNameLength: 256,
  /** Deepest nesting of arguments. */
  maxDepth: 64,
  /** Most values (objects, arrays, scalars) in the arguments. */
  maxNodes: 100_000,
  /** Longest single string in the arguments. */
  maxStringLength: 1_000_000,
  /** Most characters in all the strings and argument names of the arguments together (16 Mi). */
  maxTotalLength: 16 * 1024 * 1024,
} as const;

const KNOWN_KEYS = new Set([
  "tool",
  "server",
  "agent",
  "arguments",
  "category",
  "risk_level",
  "annotations",
  "graph",
  "contract",
]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function issue(code: string, path: (string | number)[], message: string): Issue {
  return { code, path, message };
}

function checkName(value: unknown, key: string, required: boolean, issues: Issue[]): void {
  if (value === undefined && !required) return;
  if (typeof value !== "string" || value.length === 0) {
    issues.push(issue("invalid_request", [key], `\`${key}\` must be a non-empty string`));
  } else if (value.length > REQUEST_LIMITS.maxNameLength) {
    issues.push(
      issue("request_too_large", [key], `\`${key}\` is longer than ${REQUEST_LIMITS.maxNameLength} characters`),
    );
  } else if (!isWellFormedString(value)) {
    issues.push(issue("invalid_request", [key], `\`${key}\` holds ${LONE_SURROGATE}`));
  } else {
    // a name a person cannot read as it is: no rule written for the name it shows matches it
    const unreadable = findUnreadableName(value);
    if (unreadable !== undefined) issues.push(issue("invalid_request", [key], `\`${key}\` holds ${unreadable}`));
  }
}

/**
 * Valid in JSON text, but not I-JSON (RFC 7493): the consent proof and the audit chain are over I-JSON, so
 * such a request could be neither proven nor recorded as sent.
 */
const LONE_SURROGATE = "a lone surrogate (not valid I-JSON)";

/** A number JavaScript cannot tell from its neighbours: beyond ±2^53−1, a double is an integer and may be a rounded one. */
function isBeyondSafe(n: number): boolean {
  return n > Number.MAX_SAFE_INTEGER || n < -Number.MAX_SAFE_INTEGER;
}

/**
 * Where in the arguments (an object the walk below accepted: at most 64 deep) the first number beyond
 * ±`Number.MAX_SAFE_INTEGER` is, in document order. Walked only once the walk found one.
 */
function unsafeIntegerPath(value: unknown, path: (string | number)[]): (string | number)[] | undefined {
  if (typeof value === "number") return isBeyondSafe(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unsafeIntegerPath(value[i], [...path, i]);
      if (found !== undefined) return found;
    }
  } else if (isPlainObject(value)) {
    for (const key of Object.keys(value)) {
      const found = unsafeIntegerPath(value[key], [...path, key]);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * A number beyond ±2^53−1 in the arguments: JSON text such as `1234567890123456789` (a snowflake id) is
 * read as the nearest double (1234567890123456768, printed `1234567890123456800`), so the action decided,
 * recorded and forwarded would not be the one sent. Every double that large is an integer, and once parsed
 * the text it came from cannot be told from it, so every such number is refused (`1e20` and `1.5e300` too):
 * the caller sends it as a string. The issue's path names the argument (`arguments.ids.0`).
 */
function unsafeIntegerIssue(args: unknown): Issue {
  return issue(
    "unsafe_integer",
    unsafeIntegerPath(args, ["arguments"]) ?? ["arguments"],
    `a number beyond ±${Number.MAX_SAFE_INTEGER} cannot be carried exactly (JSON numbers that large may ` +
      "have lost digits when parsed, so the action decided could differ from the one sent): send it as a string",
  );
}

/** Walks a value without recursion, bounding depth, node count, string length and total length. */
function checkArguments(value: unknown, issues: Issue[]): void {
  if (!isPlainObject(value)) {
    issues.push(issue("invalid_request", ["arguments"], "`arguments` must be an object"));
    return;
  }
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  let nodes = 0;
  let length = 0;
  /** A number beyond ±2^53−1 was met (its place is looked up only then: the common path stays one walk). */
  let unsafe = false;
  const tooLong = (): boolean => {
    if (length <= REQUEST_LIMITS.maxTotalLength) return false;
    const limit = REQUEST_LIMITS.maxTotalLength.toLocaleString("en-US");
    issues.push(issue("request_too_large", ["arguments"], `arguments hold more than ${limit} characters in all`));
    return true;
  };
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop() as { value: unknown; depth: number };
    if (++nodes > REQUEST_LIMITS.maxNodes) {
      issues.push(
        issue("request_too_large", ["arguments"], `arguments hold more than ${REQUEST_LIMITS.maxNodes} values`),
      );
      return;
    }
    if (depth > REQUEST_LIMITS.maxDepth) {
      issues.push(issue("request_too_large", ["arguments"], `arguments nest deeper than ${REQUEST_LIMITS.maxDepth}`));
      return;
    }
    if (typeof v === "string") {
      if (v.length > REQUEST_LIMITS.maxStringLength) {
        issues.push(
          issue("request_too_large", ["arguments"], "an argument string is longer than 1,000,000 characters"),
        );
        return;
      }
      length += v.length;
      if (tooLong()) return;
      if (!isWellFormedString(v)) {
        issues.push(issue("invalid_request", ["arguments"], `an argument string holds ${LONE_SURROGATE}`));
        return;
      }
    } else if (typeof v === "number") {
      if (!Number.isFinite(v))
        issues.push(issue("invalid_request", ["arguments"], "arguments hold a non-finite number"));
      else if (isBeyondSafe(v)) unsafe = true;
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push({ value: item, depth: depth + 1 });
    } else if (isPlainObject(v)) {
      for (const key of Object.keys(v)) {
        length += key.length;
        if (tooLong()) return;
        if (!isWellFormedString(key)) {
          issues.push(issue("invalid_request", ["arguments"], `an argument name holds ${LONE_SURROGATE}`));
          return;
        }
        stack.push({ value: v[key], depth: depth + 1 });
      }
    } else if (v !== null && typeof v !== "boolean") {
      issues.push(issue("invalid_request", ["arguments"], `arguments hold a value of type ${typeof v}`));
      return;
    }
  }
  if (unsafe) issues.push(unsafeIntegerIssue(value));
}

/**
 * Checks that an untrusted value is a well-formed action request within the limits.
 * Deeper checks (the graph target, the contract event) belong to the sources that read them.
 */
export function validateActionRequest(value: unknown): Result<ActionRequest> {
  if (!isPlainObject(value)) {
    return { ok: false, issues: [issue("invalid_request", [], "the request must be an object")] };
  }
  const issues: Issue[] = [];
  for (const key of Object.keys(value)) {
    if (!KNOWN_KEYS.has(key)) issues.push(issue("invalid_request", [key], `unknown request field \`${key}\``));
  }
  checkName(value["tool"], "tool", true, issues);
  checkName(value["server"], "server", false, issues);
  checkName(value["agent"], "agent", false, issues);
  checkArguments(value["arguments"], issues);
  const category = value["category"];
  if (category !== undefined && !(CATEGORIES as readonly unknown[]).includes(category)) {
    issues.push(issue("invalid_request", ["category"], `unknown category \`${JSON.stringify(category)}\``));
  }
  const risk = value["risk_level"];
  if (risk !== undefined && !(RISK_LEVELS as readonly unknown[]).includes(risk)) {
    issues.push(issue("invalid_request", ["risk_level"], `unknown risk level \`${JSON.stringify(risk)}\``));
  }
  const annotations = value["annotations"];
  if (annotations !== undefined && !isPlainObject(annotations)) {
    issues.push(issue("invalid_request", ["annotations"], "`annotations` must be an object"));
  }
  const graph = value["graph"];
  if (graph !== undefined && !isPlainObject(graph)) {
    issues.push(issue("invalid_request", ["graph"], "`graph` must be an object with `domain` and `action`"));
  }
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, value: value as unknown as ActionRequest };
}
