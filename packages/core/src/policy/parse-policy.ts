import { fail, ok, ValidationError, type Issue, type Result } from "../issues/index.js";
import { loadPolicyYaml } from "./load-yaml.js";
import { indexAliases, type ReadContext } from "./node-reader.js";
import { readPolicyDocument } from "./read-policy.js";
import { deepFreeze } from "./deep-freeze.js";
import type { Policy } from "./types.js";

/** Options for {@link parsePolicy}. */
export interface ParsePolicyOptions {
  /** The file name, used in the message of {@link assertPolicy}'s error (issues carry line and column). */
  readonly file?: string;
}

function internalIssue(err: unknown): Issue {
  if (err instanceof RangeError) {
    return { code: "policy_too_deep", path: [], message: "the policy nests too deeply to read", line: 1, column: 1 };
  }
  const reason = err instanceof Error ? err.message.replace(/\s+/g, " ").slice(0, 200) : "unknown error";
  return {
    code: "policy_parse_failed",
    path: [],
    message: `the policy could not be read: ${reason}`,
    line: 1,
    column: 1,
  };
}

function parseUnguarded(text: string): Result<Policy> {
  const loaded = loadPolicyYaml(text);
  if (!loaded.ok) return fail(loaded.issues);
  const { doc, lines } = loaded.value;
  const issues: Issue[] = [];
  const aliases = doc !== undefined ? indexAliases(doc, lines, issues) : new Map();
  if (aliases === undefined) return fail(issues);
  const ctx: ReadContext = { issues, lines, aliases };
  const policy = readPolicyDocument(ctx, doc);
  if (issues.length > 0 || policy === undefined) return fail(sortIssues(issues));
  return ok(deepFreeze(policy));
}

function sortIssues(issues: readonly Issue[]): Issue[] {
  return [...issues].sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
}

/**
 * Parses and validates a policy file (consent protocol §5.1) into the frozen {@link Policy} model.
 * Never throws, whatever the input: every problem in the file is reported in one pass, each issue with a
 * stable `code`, its `path`, a 1-based `line` and `column`, and often a `help` suggestion. Text over
 * `MAX_POLICY_BYTES` or nested deeper than `MAX_POLICY_DEPTH` is refused before YAML parsing.
 */
export function parsePolicy(text: string, options: ParsePolicyOptions = {}): Result<Policy> {
  void options;
  try {
    if (typeof text !== "string") {
      return fail([{ code: "wrong_type", path: [], message: "policy text must be a string", line: 1, column: 1 }]);
    }
    return parseUnguarded(text);
  } catch (err) {
    return fail([internalIssue(err)]);
  }
}

/** Like {@link parsePolicy}, but returns the policy or throws a {@link ValidationError} carrying the issues. */
export function assertPolicy(text: string, options: ParsePolicyOptions = {}): Policy {
  const result = parsePolicy(text, options);
  if (result.ok) return result.value;
  throw new ValidationError(`invalid policy${options.file !== undefined ? ` \`${options.file}\`` : ""}`, result.issues);
}
