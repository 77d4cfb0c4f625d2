import type { Command } from "commander";
import { formatIssue, lintConsentGraph } from "@acp/core";
import { readConsentGraphText } from "@acp/store";
import { printError, printJson, printLine, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { graphFileOf, missingGraphError, unreadableGraphError } from "./graph-check.js";

/** Registers `acp graph lint [FILE]`. */
export function registerGraphLint(parent: Command, ctx: CliContext): void {
  parent
    .command("lint")
    .description("report problems in a consent graph as FILE:LINE:COL lines (exit 0 clean, 4 with problems)")
    .argument("[file]", "the graph (default: $ACP_HOME/consent-graph.json)")
    .option("--json", "print {file, valid, issues} as JSON (and `ok`, the same as `valid`, kept for old scripts)")
    .addHelpText(
      "after",
      `
Reports JSON and schema errors (unknown keys get a suggestion), an action in more
than one tier, an action listed twice, a domain missing one of autonomous /
requires_approval / blocked, an empty domain, and a trusted_channel_required
action that is in no tier.

Exit codes: 0 no problems, 4 at least one problem (an oversized file is one too), 1 no such file (the
message says how to create one) or one that cannot be read (a directory, no permission; with --json too:
no JSON is printed), 2 usage.

Examples:
  echo '{"imessage": {"autonomous": ["read"], "requires_approval": ["send_vip"], "blocked": ["delete_all"]}}' > graph.json
  acp graph lint graph.json                     # graph.json: ok
  acp graph lint graph.json --json
  acp graph lint                                # $ACP_HOME/consent-graph.json`,
    )
    .action((file: string | undefined, options: { json?: boolean }) => {
      const { path, shown } = graphFileOf(ctx, file);
      const read = readConsentGraphText(path);
      if (read.status === "missing")
        throw missingGraphError(shown, file === undefined, "name one: `acp graph lint FILE`");
      if (read.status === "unreadable") throw unreadableGraphError(shown, read.reason);
      const issues = read.status === "ok" ? lintConsentGraph(read.text) : read.issues;
      if (options.json === true) {
        // `valid`, as `acp policy validate --json` and `acp proof verify --json` say it; `ok` kept for old scripts
        const valid = issues.length === 0;
        printJson(ctx, { file: shown, valid, ok: valid, issues });
      } else if (issues.length === 0) {
        printLine(ctx, `${shown}: ok`);
      } else {
        for (const issue of issues) printError(ctx, formatIssue(issue, shown));
      }
      if (issues.length > 0) {
        if (options.json !== true) throw new CliError(`${issues.length} problem(s) in \`${shown}\``, EXIT.invalid);
        ctx.exitCode = EXIT.invalid;
      }
    });
}
