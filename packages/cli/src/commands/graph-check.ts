import type { Command } from "commander";
import {
  checkConsentGraph,
  formatIssue,
  type ConsentGraph,
  type GraphMapping,
  type GraphOutcome,
  type GraphProposal,
  type GraphReviewRecord,
} from "@acp/core";
import { graphReviewsPath, loadConsentGraphFile, readGraphReviews } from "@acp/store";
import { join } from "node:path";
import { printError, printJson, printLine, resolveHome, resolvePath, type CliContext } from "../context.js";
import { loadGraphMapping } from "../decision/graph-config.js";
import { CliError, EXIT } from "../exit-codes.js";

/** The graph file a command reads: `--graph FILE` or `$ACP_HOME/consent-graph.json`, and how to show it. */
export function graphFileOf(ctx: CliContext, option: string | undefined): { path: string; shown: string } {
  if (option !== undefined) return { path: resolvePath(ctx.io, option), shown: option };
  const path = join(resolveHome(ctx.io), "consent-graph.json");
  return { path, shown: path };
}

/**
 * A smallest consent graph (one domain, every tier listed) for a person to start from: the hint gives it
 * inline, since an installed acp has no copy of the repository's `spec/examples/consent-graph.json`.
 */
export const STARTER_GRAPH_JSON = '{"email": {"autonomous": ["read"], "requires_approval": ["send"], "blocked": []}}';

/** A shell command that writes `STARTER_GRAPH_JSON` to `path` (quoted for the shell when it needs it). */
export function writeStarterGraphCommand(path: string): string {
  const target = /^[\w./~+-]+$/.test(path) ? path : `'${path.replace(/'/g, "'\\''")}'`;
  return `echo '${STARTER_GRAPH_JSON}' > ${target}`;
}

/**
 * The error for a missing graph file, said as for every file the CLI cannot find (`cannot read … \`X\`: no
 * such file`), with how to create one that works wherever acp is installed; `other` is how the command takes
 * another file (`pass --graph FILE` for check and review; lint takes it as an argument). Exit 1, as for
 * every file the CLI cannot find (`acp policy …` included): 4 is for a file that was read and does not validate.
 */
export function missingGraphError(shown: string, isDefault: boolean, other = "pass --graph FILE"): CliError {
  const create = `create one to start from: \`${writeStarterGraphCommand(shown)}\``;
  const how = isDefault ? `${create}, or ${other}` : `check the path, or ${create}`;
  return new CliError(`cannot read consent graph \`${shown}\`: no such file (${how})`, EXIT.error);
}

/**
 * The error for a graph file that is there and cannot be read (`graph_unreadable`: a directory, no
 * permission): exit 1, an I/O error, as for a policy file (`acp policy validate`), not 4 (invalid input).
 */
export function unreadableGraphError(shown: string, reason: string): CliError {
  return new CliError(`cannot read consent graph \`${shown}\`: ${reason}`, EXIT.error);
}

/**
 * Loads and parses the graph, printing each issue as `FILE:LINE:COL: message`; throws a CliError otherwise:
 * exit 1 when there is no such file or it cannot be read, 4 when it does not validate.
 */
export function loadGraphOrFail(ctx: CliContext, option: string | undefined): { graph: ConsentGraph; shown: string } {
  const { path, shown } = graphFileOf(ctx, option);
  const file = loadConsentGraphFile(path);
  if (file.status === "missing") throw missingGraphError(shown, option === undefined);
  if (file.status === "unreadable") throw unreadableGraphError(shown, file.reason);
  if (file.status === "invalid") {
    for (const issue of file.issues) printError(ctx, formatIssue(issue, shown));
    throw new CliError(
      `invalid consent graph \`${shown}\` (${file.issues.length} problem(s); see \`acp graph lint\`)`,
      EXIT.invalid,
    );
  }
  return { graph: file.graph, shown };
}

/**
 * The graph mapping reviews are judged against (`--config FILE`, default `$ACP_HOME/config.yml`): a review
 * made under another mapping counts as not reviewed. A config that cannot be read or is invalid is warned
 * about and judged as no mapping (stricter: a review made under a mapping then counts as not reviewed).
 */
export function loadMappingForCheck(ctx: CliContext, config: string | undefined): GraphMapping | undefined {
  try {
    return loadGraphMapping(resolveHome(ctx.io), config !== undefined ? resolvePath(ctx.io, config) : undefined);
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).split("\n")[0] ?? "";
    printError(ctx, `acp: warning: ignoring the graph mapping (${why}): reviews are judged as made under none`);
    return undefined;
  }
}

/** The review record for decay; an unusable record counts as never reviewed, with a warning. */
export function loadReviewsForCheck(ctx: CliContext): GraphReviewRecord | undefined {
  const path = graphReviewsPath(resolveHome(ctx.io));
  const result = readGraphReviews(path);
  if (result.ok) return result.value;
  printError(
    ctx,
    `acp: warning: ignoring review record \`${path}\` (${result.issues[0]?.message ?? "malformed"}): every domain counts as never reviewed`,
  );
  return undefined;
}

function parseUnit(text: string, what: string): number {
  const value = /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= 0 && value <= 1))
    throw new CliError(`invalid ${what} \`${text}\` (expected a number from 0 to 1)`, EXIT.invalid);
  return value;
}

function parseProposal(text: string): GraphProposal {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new CliError('invalid --proposal: not JSON (expected {"diff", "undo", "proposed_at"})', EXIT.invalid);
  }
  const keys = ["diff", "undo", "proposed_at"];
  const ok =
    typeof raw === "object" &&
    raw !== null &&
    !Array.isArray(raw) &&
    Object.entries(raw).every(([k, v]) => keys.includes(k) && typeof v === "string");
  if (!ok)
    throw new CliError("invalid --proposal: expected an object of strings `diff`, `undo`, `proposed_at`", EXIT.invalid);
  return raw as GraphProposal;
}

const SUMMARY: Record<GraphOutcome["outcome"], string> = {
  AUTONOMOUS: "execute and log",
  VISIBLE: "proceed and notify",
  FORCED: "ask first",
  BLOCKED: "do not execute; alert the operator",
};

/** The human line: `VISIBLE -- proceed and notify: <reason>`, then the other reasons. */
export function formatGraphOutcome(outcome: GraphOutcome): string[] {
  const summary =
    outcome.deferred_until !== undefined ? `defer until ${outcome.deferred_until}, then ask` : SUMMARY[outcome.outcome];
  const [first, ...rest] = outcome.reasons;
  return [
    `${outcome.outcome} -- ${summary}${first !== undefined ? `: ${first.message}` : ""}`,
    ...rest.map((r) => `  also: ${r.message}`),
  ];
}

interface CheckOptions {
  graph?: string;
  config?: string;
  threshold?: string;
  proposal?: string;
  json?: boolean;
}

/** Registers `acp graph check DOMAIN ACTION [CONFIDENCE]`. */
export function registerGraphCheck(parent: Command, ctx: CliContext): void {
  parent
    .command("check")
    .description(
      "classify DOMAIN ACTION [CONFIDENCE] against the consent graph: AUTONOMOUS, VISIBLE, FORCED or BLOCKED",
    )
    .argument("<domain>", "the graph domain (email, imessage, calendar, …)")
    .argument("<action>", "the action, as listed in the domain's tiers")
    .argument("[confidence]", "the agent's confidence from 0 to 1 (absent: 0)")
    .option("--graph <file>", "the consent graph (default: $ACP_HOME/consent-graph.json)")
    .option("--config <file>", "the config whose graph.mapping reviews are bound to (default: $ACP_HOME/config.yml)")
    .option("--threshold <n>", "VISIBLE from this confidence up (default 0.85)")
    .option("--proposal <json>", 'a self-modification proposal: {"diff", "undo", "proposed_at"}')
    .option("--json", "print the outcome as JSON")
    .addHelpText(
      "after",
      `
Outcomes (first word of the output):
  AUTONOMOUS  execute it and log it                                            exit 0
  VISIBLE     requires approval, confidence >= threshold: proceed and notify   exit 0
  FORCED      requires approval, confidence below threshold: ask first         exit 3
  BLOCKED     blocked, unclassified, or a constraint failed: refuse and alert  exit 3

Exit codes: 0 AUTONOMOUS or VISIBLE, 3 FORCED or BLOCKED, 1 no graph file (the message says how to
create one) or one that cannot be read (a directory, no permission), 4 an invalid graph, confidence,
threshold or --proposal, 2 usage.

Consent decay: autonomous tiers not reviewed within consent_decay.review_interval_days
behave as requires approval; record a review with \`acp graph review\`. A review made under
another review_interval_days or another graph.mapping (read from --config, default
$ACP_HOME/config.yml) counts as not reviewed.
Trusted-channel actions are BLOCKED here: the CLI cannot present an attestation.
A --proposal is seen now for the first time: its cooling period counts from now (or from
its proposed_at, if later), so it is never over here. Where the domain has require_diff, its
diff must be diff lines only: "-" before and "+" after ("-be terse\\n+be concise"), or a
unified diff whose @@ hunk header says where a change that only adds or removes goes;
bullets ("- be friendlier") or prose beside the lines are BLOCKED (diff_required).

Examples:
  echo '{"imessage": {"autonomous": ["read"], "requires_approval": ["send_vip"], "blocked": ["delete_all"]}}' > graph.json
  acp graph check imessage send_vip 0.9 --graph graph.json
    VISIBLE -- proceed and notify: \`imessage.send_vip\` requires approval and confidence 0.9 …
  acp graph check imessage send_vip 0.5 --graph graph.json
    FORCED -- ask first: \`imessage.send_vip\` requires approval and confidence 0.5 is below 0.85 …
  acp graph check imessage delete_all --graph graph.json
    BLOCKED -- do not execute; alert the operator: …
  acp graph check email read --json       # against $ACP_HOME/consent-graph.json`,
    )
    .action((domain: string, action: string, confidence: string | undefined, options: CheckOptions) => {
      const target = {
        domain,
        action,
        ...(confidence !== undefined ? { confidence: parseUnit(confidence, "confidence") } : {}),
        ...(options.proposal !== undefined ? { proposal: parseProposal(options.proposal) } : {}),
      };
      const threshold = options.threshold !== undefined ? parseUnit(options.threshold, "threshold") : undefined;
      const { graph } = loadGraphOrFail(ctx, options.graph);
      const reviews = loadReviewsForCheck(ctx);
      const reviewedMapping = reviews !== undefined ? loadMappingForCheck(ctx, options.config) : undefined;
      const outcome = checkConsentGraph(graph, target, {
        now: ctx.io.now(),
        ...(reviewedMapping !== undefined ? { reviewedMapping } : {}),
        ...(threshold !== undefined ? { threshold } : {}),
        ...(reviews !== undefined ? { reviews } : {}),
        ...(options.graph !== undefined ? { graphFile: options.graph } : {}),
      });
      if (options.json === true) printJson(ctx, outcome);
      else for (const line of formatGraphOutcome(outcome)) printLine(ctx, line);
      ctx.exitCode = outcome.outcome === "AUTONOMOUS" || outcome.outcome === "VISIBLE" ? EXIT.ok : EXIT.refused;
    });
}
