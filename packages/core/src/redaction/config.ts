import { UnsupportedRegexError, compileLinearPattern, type LinearPattern } from "../glob/index.js";
import { fail, ok, type Issue, type Result } from "../issues/index.js";
import { DEFAULT_REDACTION, extendRedaction, type RedactionRules } from "./rules.js";
import { suggest } from "../suggest/index.js";

const MAX_PATTERNS = 200;
const MAX_PATTERN_LENGTH = 500;
const FIELDS = ["keys", "values", "defaults"];

/** The closest field (`did you mean`), else every field. */
function unknownHelp(key: string): string {
  const near = suggest(key, FIELDS);
  return near !== undefined ? `did you mean \`redaction.${near}\`?` : `expected ${FIELDS.join(", ")}`;
}

function stringList(raw: unknown, field: string, issues: Issue[]): string[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw) || raw.length > MAX_PATTERNS) {
    issues.push({
      code: "redaction_config_invalid",
      path: ["redaction", field],
      message: `\`redaction.${field}\` must be a list of at most ${MAX_PATTERNS} strings`,
    });
    return [];
  }
  const out: string[] = [];
  for (const [i, item] of raw.entries()) {
    if (typeof item !== "string" || item.length === 0 || item.length > MAX_PATTERN_LENGTH) {
      issues.push({
        code: "redaction_config_invalid",
        path: ["redaction", field, i],
        message: `\`redaction.${field}.${i}\` must be a non-empty string of at most ${MAX_PATTERN_LENGTH} characters`,
      });
    } else out.push(item);
  }
  return out;
}

/**
 * `/source/flags` or a bare source, compiled for the linear-time matcher ({@link compileLinearPattern}): a
 * pattern a person writes runs over text an agent or a server chose, and in V8's backtracking engine a
 * careless one (`(a+)+$`) would stall every redaction for minutes. Not a regular expression at all:
 * `redaction_pattern_invalid`; one the linear-time matcher cannot run (a backreference, a lookaround, a
 * repetition of what can match nothing, the `u`, `v` or `y` flag, `\p{…}`): `redaction_pattern_unsupported`.
 */
function compileValue(text: string, i: number, issues: Issue[]): LinearPattern | undefined {
  const slashed = /^\/(.+)\/([dgimsuvy]*)$/s.exec(text);
  const source = slashed?.[1] ?? text;
  const flags = (slashed?.[2] ?? "").replace(/g/g, "");
  const path = ["redaction", "values", i];
  try {
    new RegExp(source, flags); // the syntax a person knows, checked by the engine they know it from
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^Invalid regular expression: /, "") : "invalid";
    issues.push({
      code: "redaction_pattern_invalid",
      path,
      message: `\`redaction.values.${i}\` is not a regular expression: ${why}`,
    });
    return undefined;
  }
  try {
    return compileLinearPattern(source, flags);
  } catch (err) {
    if (!(err instanceof UnsupportedRegexError)) throw err;
    const offset = slashed === null ? 0 : 1;
    const where = err.index === undefined ? "" : ` at character ${err.index + offset + 1}`;
    issues.push({
      code: "redaction_pattern_unsupported",
      path,
      message:
        `\`redaction.values.${i}\`: ${err.message}${where} is refused: a pattern runs over text an agent ` +
        "chose, in a matcher whose time is linear in it, which has no backreferences, lookarounds, `\\p{…}` or flags u, v and y",
    });
    return undefined;
  }
}

/**
 * Reads the `redaction:` section of config.yml: `keys` (wildcard key-name patterns), `values` (regular
 * expressions, bare or `/source/flags`), both added to the defaults unless `defaults: false`. A missing
 * section is the defaults. Every problem is reported; nothing is half-applied.
 */
export function parseRedactionConfig(raw: unknown): Result<RedactionRules> {
  if (raw === undefined || raw === null) return ok(DEFAULT_REDACTION);
  if (typeof raw !== "object" || Array.isArray(raw)) {
    return fail([{ code: "redaction_config_invalid", path: ["redaction"], message: "`redaction` must be a mapping" }]);
  }
  const section = raw as Record<string, unknown>;
  const issues: Issue[] = [];
  for (const key of Object.keys(section)) {
    if (!FIELDS.includes(key)) {
      issues.push({
        code: "redaction_config_invalid",
        path: ["redaction", key],
        message: `unknown key \`redaction.${key}\` (${unknownHelp(key)})`,
      });
    }
  }
  const defaults = section["defaults"] ?? true;
  if (typeof defaults !== "boolean") {
    issues.push({
      code: "redaction_config_invalid",
      path: ["redaction", "defaults"],
      message: "`redaction.defaults` must be true or false",
    });
  }
  const keys = stringList(section["keys"], "keys", issues);
  const values = stringList(section["values"], "values", issues)
    .map((text, i) => compileValue(text, i, issues))
    .filter((re): re is LinearPattern => re !== undefined);
  if (issues.length > 0) return fail(issues);
  const rules: RedactionRules = { keys, values };
  return ok(defaults === false ? rules : extendRedaction(rules));
}
