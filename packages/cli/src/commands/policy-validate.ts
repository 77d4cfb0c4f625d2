import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Command } from "commander";
import {
  findIneffectiveKeys,
  findQuotedPatterns,
  findLookAlikePatterns,
  findPrefixedToolNames,
  findShadowedRules,
  formatIssue,
  MAX_POLICY_BYTES,
  parsePolicy,
  type Issue,
  type Result,
  type Policy,
} from "@acp/core";
import { printError, printJson, printLine, resolveHome, type CliContext } from "../context.js";
import { resolvePolicyPath } from "../wiring/policy-path.js";
import { CliError, EXIT } from "../exit-codes.js";
import { readFailure } from "../decision/read-input.js";

/** What `--json` prints. */
export interface PolicyValidationReport {
  readonly file: string;
  readonly valid: boolean;
  /** The number of rules when valid, else `null`. */
  readonly rules: number | null;
  readonly issues: readonly Issue[];
  /**
   * Problems that do not make the policy invalid: rules an earlier rule shadows (`shadowed_rule`), tools
   * written `server__tool` (`prefixed_tool_name`), names that pass for others (`look_alike_pattern`), keys
   * that do nothing (`ineffective_key`), globs wholly in quotes (`quoted_pattern`).
   */
  readonly warnings: readonly Issue[];
}

const HELP = `
Checks a policy file (consent protocol §5.1) and reports EVERY problem in one pass,
one line each on stderr, as FILE:LINE:COL: message (help). Typos get a suggestion:
unknown keys (\`acton\` → did you mean \`action\`) and unknown values (\`alow\` → \`allow\`).
Nothing is changed; nothing is evaluated.

FILE defaults to the policy acp uses: defaults.policy of $ACP_HOME/config.yml, else $ACP_HOME/policy.yml
(~/.acp/policy.yml); \`-\` reads standard input.

Exit codes: 0 valid, 1 the file cannot be read, 2 usage (an unknown option), 4 invalid (also with --json).

Examples:
  acp policy validate                          # $ACP_HOME/policy.yml
  acp policy validate ~/.acp/policy.yml
  acp policy validate ~/.acp/policy.yml --json | jq '.issues[].message'
  cat ~/.acp/policy.yml | acp policy validate -

Output when valid:    policy.yml: valid (3 rules)
  and on stderr, for a rule an earlier rule shadows (still exit 0):
                      policy.yml:9:5: warning: rule \`no-etc\` can never match: rule \`reads\` (line 3) comes first …
Output when invalid:  policy.yml:14:13: while reading rule \`send-mail\`: unknown action \`alow\` (expected allow, ask or deny) (did you mean \`allow\`)

Reference: acp docs reference/policy, acp docs reference/cli/policy-validate`;

function tooLarge(size: number): Result<Policy> {
  const message = `policy is ${size} bytes, larger than ${MAX_POLICY_BYTES} bytes (10 MiB)`;
  return { ok: false, issues: [{ code: "policy_too_large", path: [], message, line: 1, column: 1 }] };
}

function notUtf8(): Result<Policy> {
  const message = "the file is not valid utf-8";
  return { ok: false, issues: [{ code: "invalid_encoding", path: [], message, line: 1, column: 1 }] };
}

/** Reads the file (refusing absurd sizes before reading) and decodes it as strict UTF-8. */
async function readPolicyBytes(path: string, shown: string, isDefault: boolean): Promise<Uint8Array | number> {
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new CliError(`cannot read policy \`${shown}\`: not a file`, EXIT.error);
    if (info.size > MAX_POLICY_BYTES) return info.size;
    return await readFile(path);
  } catch (err) {
    if (err instanceof CliError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      const hint = isDefault ? " (run `acp init` to create one, or pass FILE)" : "";
      throw new CliError(`cannot read policy \`${shown}\`: no such file${hint}`, EXIT.error);
    }
    throw new CliError(`cannot read policy \`${shown}\`: ${readFailure(err)}`, EXIT.error);
  }
}

async function validateInput(
  ctx: CliContext,
  file: string | undefined,
): Promise<{ shown: string; result: Result<Policy>; text?: string }> {
  if (file === "-") {
    const text = await ctx.io.readStdin();
    return { shown: "<stdin>", result: parsePolicy(text, { file: "<stdin>" }), text };
  }
  const home = resolveHome(ctx.io);
  const choice = resolvePolicyPath(ctx.io, home, file, join(home, "config.yml"));
  const path = choice.path;
  const shown = file ?? path;
  const bytes = await readPolicyBytes(path, shown, choice.source === "home");
  if (typeof bytes === "number") return { shown, result: tooLarge(bytes) };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { shown, result: notUtf8() };
  }
  return { shown, result: parsePolicy(text, { file: shown }), text };
}

/**
 * The warnings of a valid policy, in file order: rules that can never match (`findShadowedRules`),
 * tools written as the proxy shows them (`findPrefixedToolNames`), names that pass for others
 * (`findLookAlikePatterns`), keys that do nothing for their
 * rule's action (`findIneffectiveKeys`) and globs wholly in quotes (`findQuotedPatterns`), each placed at its rule's first key on its line (after the `- `
 * of the list item).
 */
function policyWarnings(policy: Policy, text: string | undefined): Issue[] {
  const lines = text?.split(/\r?\n/) ?? [];
  const found = [
    ...findShadowedRules(policy.rules),
    ...findPrefixedToolNames(policy),
    ...findLookAlikePatterns(policy),
    ...findIneffectiveKeys(policy.rules),
    ...findQuotedPatterns(policy),
  ];
  found.sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER));
  return found.map((warning) => {
    const line = warning.line === undefined ? undefined : lines[warning.line - 1];
    if (line === undefined) return warning;
    return { ...warning, column: (/^\s*(?:-\s+)?/.exec(line)?.[0].length ?? 0) + 1 };
  });
}

/** Registers `acp policy validate [FILE]`. */
export function registerPolicyValidate(parent: Command, ctx: CliContext): void {
  parent
    .command("validate")
    .description("check a policy file and report every problem as FILE:LINE:COL (exit 0 valid, 4 invalid)")
    .argument("[file]", "the policy (default: defaults.policy of config.yml, else $ACP_HOME/policy.yml; `-` for stdin)")
    .option("--json", "print {file, valid, rules, issues} as JSON on stdout")
    .addHelpText("after", HELP)
    .action(async (file: string | undefined, options: { json?: boolean }) => {
      const { shown, result, text } = await validateInput(ctx, file);
      const warnings = result.ok ? policyWarnings(result.value, text) : [];
      if (options.json === true) {
        const report: PolicyValidationReport = result.ok
          ? { file: shown, valid: true, rules: result.value.rules.length, issues: [], warnings }
          : { file: shown, valid: false, rules: null, issues: result.issues, warnings };
        printJson(ctx, report);
      } else if (result.ok) {
        const count = result.value.rules.length;
        printLine(ctx, `${shown}: valid (${count} ${count === 1 ? "rule" : "rules"})`);
        for (const warning of warnings) {
          printError(ctx, formatIssue({ ...warning, message: `warning: ${warning.message}` }, shown));
        }
      } else {
        for (const issue of result.issues) printError(ctx, formatIssue(issue, shown));
      }
      if (!result.ok) ctx.exitCode = EXIT.invalid;
    });
}
