import { existsSync } from "node:fs";
import type { Command } from "commander";
import { printError, printJson, printLine, resolveHome, resolvePath, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { describeFailure, findTestFiles, runTestFile, type CaseResult } from "../decision/run-tests.js";
import { join } from "node:path";
import { loadGraphSettings } from "../decision/graph-config.js";

interface TestOptions {
  policy?: string;
  graph?: string;
  config?: string;
  json?: boolean;
}

/** `1 file`, `2 files`. */
const counted = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** Registers `acp policy test`. */
export function registerPolicyTest(parent: Command, ctx: CliContext): void {
  parent
    .command("test")
    .description("run YAML decision test cases (request + expected route + expected deciding rule)")
    .argument("[path]", "a test file, or a directory searched for *.test.yml (default: $ACP_HOME/policy.test.yml)")
    .option("--policy <file>", "use this policy instead of the one each test file names")
    .option("--graph <file>", "use this consent graph instead of the one each test file names")
    .option(
      "--config <file>",
      "apply this config file's `graph:` mapping and threshold (and the home's graph reviews) to every graph",
    )
    .option("--json", "print every case result as JSON")
    .addHelpText(
      "after",
      `
A test file:
  policy: policy.yml              # relative to the test file
  graph: consent-graph.json       # optional
  cases:
    - name: reading a file is allowed
      request: { tool: read_file, server: fs, arguments: { path: /tmp/a } }
      expect: { route: accept, rule: "policy:read-anything" }
    - name: the 21st mail in a minute is refused
      request: { tool: send_email, arguments: { to: a@example.com } }
      at: 2026-03-02T10:00:00Z    # optional; the clock for this case
      times: 21                   # optional; run 21 times, check the last
      expect: { route: refuse }

A request without \`arguments\` is a call of a tool with no arguments (judged with \`arguments: {}\`,
as acp proxy judges a tools/call that leaves them out); arguments that are not a mapping are an error.
Cases in one file share rate-limit state, in order. Unknown keys are errors.
Without --config a test file's graph is judged on its own (no mapping: a request names its
graph domain and action); with --config FILE the graph also maps tool calls as FILE's
\`graph.mapping\` says, the way \`acp proxy --config FILE\` judges them.

Exit codes: 0 all passed, 1 a missing file, 2 usage, 3 a case failed, 4 an invalid test, policy or graph
file, or no cases at all (a directory with no *.test.yml files says so on stderr).

Examples:
  printf 'policy: policy.yml\\ncases:\\n  - name: reads run\\n    request: { tool: read_file }\\n    expect: { route: accept, rule: "policy:allow-reads" }\\n' > ~/.acp/policy.test.yml
  acp policy test                                    # $ACP_HOME/policy.test.yml: 1 passed, 0 failed (1 case in 1 file)
  acp policy test ~/.acp --policy ~/.acp/policy.yml  # every *.test.yml under ~/.acp, against your policy
  acp policy test --json | jq '.results[] | select(.passed | not)'`,
    )
    .action(async (path: string | undefined, options: TestOptions) => {
      const target = path !== undefined ? resolvePath(ctx.io, path) : join(resolveHome(ctx.io), "policy.test.yml");
      if (path === undefined && !existsSync(target))
        throw new CliError(
          `cannot read test file \`${target}\`: no such file (acp init writes none: name a test file or a directory of *.test.yml files)`,
          EXIT.error,
        );
      const files = await findTestFiles(target);
      const overrides = {
        ...(options.policy !== undefined ? { policy: resolvePath(ctx.io, options.policy) } : {}),
        ...(options.graph !== undefined ? { graph: resolvePath(ctx.io, options.graph) } : {}),
        ...(options.config !== undefined
          ? { graphSettings: loadGraphSettings(resolveHome(ctx.io), resolvePath(ctx.io, options.config)) }
          : {}),
      };
      const results: CaseResult[] = [];
      for (const file of files) results.push(...(await runTestFile(file, overrides, ctx.io.now())));
      const failed = results.filter((r) => !r.passed);
      if (options.json === true)
        printJson(ctx, { files: files.length, passed: results.length - failed.length, failed: failed.length, results });
      else {
        for (const result of failed) printError(ctx, describeFailure(result));
        printLine(
          ctx,
          `${results.length - failed.length} passed, ${failed.length} failed (${counted(results.length, "case", "cases")} in ${counted(files.length, "file", "files")})`,
        );
      }
      if (files.length === 0) printError(ctx, `acp: no *.test.yml (or *.test.yaml) files under \`${target}\``);
      else if (results.length === 0)
        printError(ctx, `acp: no test cases in ${files.map((f) => `\`${f}\``).join(", ")}`);
      ctx.exitCode = failed.length > 0 ? EXIT.refused : results.length === 0 ? EXIT.invalid : EXIT.ok;
    });
}
