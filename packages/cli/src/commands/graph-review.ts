import type { Command } from "commander";
import {
  checkConsentDecay,
  formatIssue,
  hashGraphDomain,
  hashGraphMapping,
  hashVipContacts,
  type ConsentGraph,
  type GraphMapping,
  type GraphReviewRecord,
} from "@acp/core";
import { graphReviewsPath, readGraphReviews, recordGraphReviewFile } from "@acp/store";
import { printError, printJson, printLine, resolveHome, resolvePath, type CliContext } from "../context.js";
import { loadGraphMapping } from "../decision/graph-config.js";
import { coolingProposalLines, coolingProposals, readProposalSightings } from "./graph-proposals.js";
import { storageUrlOption } from "./pending-store.js";
import { readFailure } from "../decision/read-input.js";
import { CliError, EXIT } from "../exit-codes.js";
import { loadGraphOrFail } from "./graph-check.js";

const DAY_MS = 24 * 60 * 60 * 1000;

interface ReviewOptions {
  graph?: string;
  config?: string;
  storageUrl?: string;
  status?: boolean;
  json?: boolean;
}

function statusRows(
  graph: ConsentGraph,
  record: GraphReviewRecord | undefined,
  now: Date,
  mapping: GraphMapping | undefined,
) {
  const mappingHash = hashGraphMapping(mapping);
  const interval = graph.consent_decay?.review_interval_days;
  return Object.entries(graph.domains).map(([name, domain]) => {
    const review = record !== undefined && Object.hasOwn(record.domains, name) ? record.domains[name] : undefined;
    const decayed = checkConsentDecay(graph, name, domain, {
      now,
      ...(record !== undefined ? { reviews: record } : {}),
      ...(mapping !== undefined ? { reviewedMapping: mapping } : {}),
    });
    return {
      domain: name,
      reviewed_at: review?.reviewed_at ?? null,
      // the domain, or what a review covers besides it: the VIP contacts (who counts as a VIP), the review
      // interval and the graph mapping (which calls reach the domain)
      changed_since_review:
        review !== undefined &&
        (review.domain_hash !== hashGraphDomain(domain) ||
          review.vip_contacts_hash !== hashVipContacts(graph.vip_contacts) ||
          review.review_interval_days !== interval ||
          review.mapping_hash !== mappingHash),
      decayed: decayed !== null,
      ...(decayed !== null ? { why: decayed.message } : {}),
    };
  });
}

async function showStatus(ctx: CliContext, graph: ConsentGraph, options: ReviewOptions): Promise<void> {
  const path = graphReviewsPath(resolveHome(ctx.io));
  const read = readGraphReviews(path);
  if (!read.ok)
    printError(ctx, `acp: warning: ignoring review record \`${path}\`: ${read.issues[0]?.message ?? "malformed"}`);
  const now = ctx.io.now();
  const rows = statusRows(graph, read.ok ? read.value : undefined, now, mappingOf(ctx, options));
  const proposals = coolingProposals(graph, await readProposalSightings(ctx, options), now);
  if (options.json === true) return printJson(ctx, { decay: graph.consent_decay ?? null, domains: rows, proposals });
  for (const row of rows) {
    const when = row.reviewed_at ?? "never reviewed";
    const state = row.decayed ? "decayed (autonomous → requires approval)" : "current";
    printLine(ctx, `${row.domain}: ${when}${row.changed_since_review ? " (changed since)" : ""}: ${state}`);
  }
  // only a graph with a cooling period has proposals to show
  if (Object.values(graph.domains).some((d) => (d.cooling_period_hours ?? 0) > 0)) {
    for (const line of coolingProposalLines(proposals)) printLine(ctx, line);
  }
}

/** The graph mapping in use (`--config FILE`, default `$ACP_HOME/config.yml`): a review is bound to it. */
function mappingOf(ctx: CliContext, options: ReviewOptions): GraphMapping | undefined {
  const config = options.config !== undefined ? resolvePath(ctx.io, options.config) : undefined;
  return loadGraphMapping(resolveHome(ctx.io), config);
}

/** Records the review; a record that cannot be read or written is an I/O error (exit 1), as for other files. */
function recordFile(path: string, graph: ConsentGraph, domains: string[], now: Date, mapping?: GraphMapping) {
  let result: ReturnType<typeof recordGraphReviewFile>;
  try {
    result = recordGraphReviewFile(path, graph, domains, now, mapping !== undefined ? { mapping } : {});
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
  const result = recordFile(path, graph, domains, now, mappingOf(ctx, options));
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
  const command = parent.command("review");
  storageUrlOption(command)
    .description("record a review of the consent graph (all domains, or those named): resets consent decay")
    .argument("[domains...]", "the domains reviewed (default: every domain)")
    .option("--graph <file>", "the consent graph (default: $ACP_HOME/consent-graph.json)")
    .option("--config <file>", "the config whose graph.mapping the review is bound to (default: $ACP_HOME/config.yml)")
    .option(
      "--status",
      "show when each domain was last reviewed and whether it has decayed, and the proposals in their cooling period with when each takes effect; record nothing",
    )
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      `
With consent_decay enabled, an autonomous tier whose domain was not reviewed within
review_interval_days behaves as requires approval. A review records, per domain, the
time and the content hash of what you reviewed in $ACP_HOME/consent-graph.reviews.json
(the graph file itself is never written). A domain edited after its review counts as
not reviewed, and so does every domain once vip_contacts changes (a contact added,
removed or changed), once consent_decay.review_interval_days changes (a review made
for 30 days is not stretched to 90), or once graph.mapping in the config changes (which
calls reach which domain: --config FILE, default $ACP_HOME/config.yml; give the one
acp proxy or acp serve uses). A graph never reviewed has decayed.

Exit codes: 0 recorded (or, with --status, shown), 1 no graph file (the message says how to create one),
a graph file, --config file or review record that cannot be read (a directory, no permission), the
record cannot be written, or (--status) state.db or the database of --storage-url cannot be read, 4 an invalid graph, config, an unknown domain, or a malformed review record
(fix or delete it: nothing is overwritten), 2 usage.

--status also lists the consent-graph proposals in their cooling period (a domain's
cooling_period_hours): those ACP has seen, with when each takes effect (the later of its
proposed_at and when ACP first saw it, plus the period), its diff, undo and call. Until then
the call is refused (cooling_period); from then it is asked. They are read from
$ACP_HOME/state.db, where acp proxy and acp serve record them, or from acp serve's
PostgreSQL database (--storage-url, ACP_STORAGE_URL or storage.url, as acp pending).

Examples:
  acp graph review                       # you reviewed the whole graph
  acp graph review email calendar        # you reviewed two domains
  acp graph review --status              # decay, and proposals still cooling`,
    )
    .action(async (domains: string[], options: ReviewOptions) => {
      const { graph } = loadGraphOrFail(ctx, options.graph);
      if (options.status === true) await showStatus(ctx, graph, options);
      else record(ctx, graph, domains, options);
    });
}
