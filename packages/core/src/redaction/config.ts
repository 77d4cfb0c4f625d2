import { fail, ok, type Issue, type Result } from "../issues/index.js";
import { DEFAULT_REDACTION, extendRedaction, type RedactionRules } from "./rules.js";

const MAX_PATTERNS = 200;
const MAX_PATTERN_LENGTH = 500;
const FIELDS = ["keys", "values", "defaults"];

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

/** `/source/flags` or a bare source; `g` is always added. */
function compileValue(text: string, i: number, issues: Issue[]): RegExp | undefined {
  const slashed = /^\/(.+)\/([dimsuvy]*)$/s.exec(text);
  const source = slashed?.[1] ?? text;
  const flags = `${(slashed?.[2] ?? "").replace(/g/g, "")}g`;
  try {
    return new RegExp(source, flags);
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^Invalid regular expression: /, "") : "invalid";
    issues.push({
      code: "redaction_pattern_invalid",
      path: ["redaction", "values", i],
      message: `\`redaction.values.${i}\` is not a regular expression: ${why}`,
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
        message: `unknown key \`redaction.${key}\` (expected ${FIELDS.join(", ")})`,
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
    .filter((re): re is RegExp => re !== undefined);
  if (issues.length > 0) return fail(issues);
  const rules: RedactionRules = { keys, values };
  return ok(defaults === false ? rules : extendRedaction(rules));
}
