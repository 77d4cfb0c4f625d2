import type { Command } from "commander";
import {
  checkConsentDecay,
  formatIssue,
  hashGraphDomain,
  hashVipContacts,
  type ConsentGraph,
  type GraphReviewRecord,
} from "@acp/core";
import { graphReviewsPath, readGraphReviews, recordGraphReviewFile } from "@acp/store";
import { printError, printJson, printLine, resolveHome, type CliContext } from "../context.js";
import { readFailure } from "../decision/read-input.js";
import { CliError, EXIT } from "../exit-codes.js";
import { loadGraphOrFail } from "./graph-check.js";

const DAY_MS = 24 * 60 * 60 * 1000;

interface ReviewOptions {
  graph?: string;
  status?: boolean;
  json?: boolean;
}

function statusRows(graph: ConsentGraph, record: GraphReviewRecord | undefined, now: Date) {
  return Object.entries(graph.domains).map(([name, domain]) => {
    const review = record !== undefined && Object.hasOwn(record.domains, name) ? record.domains[name] : undefined;
    const decayed = checkConsentDecay(graph, name, domain, {
      now,
      ...(record !== undefined ? { reviews: record } : {}),
    });
    return {
      domain: name,
      reviewed_at: review?.reviewed_at ?? null,
      // the domain, or the VIP contacts (who counts as a VIP is part of what a review covers)
      changed_since_review:
        review !== undefined &&
        (review.domain_hash !== hashGraphDomain(domain) ||
          review.vip_contacts_hash !== hashVipContacts(graph.vip_contacts)),
      decayed: decayed !== null,
    };
  });
}

function showStatus(ctx: CliContext, graph: ConsentGraph, options: ReviewOptions): void {
  const path = graphReviewsPath(resolveHome(ctx.io));
  const read = readGraphReviews(path);
  if (!read.ok)
    printError(ctx, `acp: warning: ignoring review record \`${path}\`: ${read.issues[0]?.message ?? "malformed"}`);
  const rows = statusRows(graph, read.ok ? read.value : undefined, ctx.io.now());
  if (options.json === true) return printJson(ctx, { decay: graph.consent_decay ?? null, domains: rows });
  for (const row of rows) {
    const when = row.reviewed_at ?? "never reviewed";
    const state = row.decayed ? "decayed (autonomous → requires approval)" : "current";
    printLine(ctx, `${row.domain}: ${when}${row.changed_since_review ? " (changed since)" : ""}: ${state}`);
  }
}

/** Records the review; a record that cannot be read or written is an I/O error (exit 1), as for other files. */
function recordFile(path: string, graph: ConsentGraph, domains: string[], now: Date) {
  let result: ReturnType<typeof recordGraphReviewFile>;
  try {
    result = recordGraphReviewFile(path, graph, domains, now);
  } catch (err) {
    throw new CliError(`no review recorded: cannot write review record \`${path}\`: ${readFailure(err)}`, EXIT.error);
  }
  const unreadable = result.ok ? undefined : result.issues.find((i) => i.code === "review_record_unreadable");
  if (unreadable !== undefined) throw new CliError(`no review recorded: ${unreadable.message}`, EXIT.error);
  return result;
}

function record(ctx: CliContext, graph: ConsentGraph, domains: string[], options: ReviewOptions): void {
  const path = graphReviewsPath(resolveHome(ctx.io));
  const now = ctx.io.now();
  const result = recordFile(path, graph, domains, now);
  if (!result.ok) {
    const inRecord = result.issues.some((issue) => issue.code !== "unknown_domain");
    for (const issue of result.issues)
      printError(ctx, inRecord ? formatIssue(issue, path) : formatIssue({ ...issue, path: [] }));
    throw new CliError(`no review recorded${inRecord ? `: fix or delete \`${path}\`` : ""}`, EXIT.invalid);
  }
  const decay = graph.consent_decay;
  const due =
    decay?.enabled === true ? new Date(now.getTime() + decay.review_interval_days * DAY_MS).toISOString() : null;
  if (options.json === true) {
    printJson(ctx, {
      reviewed: result.value.domains,
      reviewed_at: now.toISOString(),
      next_review_due: due,
      record: path,
    });
    return;
  }
  printLine(ctx, `reviewed ${result.value.domains.join(", ")} at ${now.toISOString()} (recorded in ${path})`);
  if (due !== null)
    printLine(ctx, `autonomous tiers stay autonomous until ${due} unless the graph changes; review again before then`);
  else printLine(ctx, "consent decay is not enabled in this graph: the review is recorded but changes no decision");
}

/** Registers `acp graph review [DOMAIN...]`. */
export function registerGraphReview(parent: Command, ctx: CliContext): void {
  parent
    .command("review")
    .description("record a review of the consent graph (all domains, or those named): resets consent decay")
    .argument("[domains...]", "the domains reviewed (default: every domain)")
    .option("--graph <file>", "the consent graph (default: $ACP_HOME/consent-graph.json)")
    .option("--status", "show when each domain was last reviewed and whether it has decayed; record nothing")
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      `
With consent_decay enabled, an autonomous tier whose domain was not reviewed within
review_interval_days behaves as requires approval. A review records, per domain, the
time and the content hash of what you reviewed in $ACP_HOME/consent-graph.reviews.json
(the graph file itself is never written). A domain edited after its review counts as
not reviewed, and so does every domain once vip_contacts changes (a contact added,
removed or changed). A graph never reviewed has decayed.

Exit codes: 0 recorded (or, with --status, shown), 1 no graph file (the message says how to create one),
a graph file or review record that cannot be read (a directory, no permission), or the record cannot be
written, 4 an invalid graph, an unknown domain, or a malformed review record (fix or delete it: nothing
is overwritten), 2 usage.

Examples:
  acp graph review                       # you reviewed the whole graph
  acp graph review email calendar        # you reviewed two domains
  acp graph review --status`,
    )
    .action((domains: string[], options: ReviewOptions) => {
      const { graph } = loadGraphOrFail(ctx, options.graph);
      if (options.status === true) showStatus(ctx, graph, options);
      else record(ctx, graph, domains, options);
    });
}
