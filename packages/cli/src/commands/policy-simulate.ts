import { Option, type Command } from "commander";
import { CATEGORIES, createMemoryRateLimiter } from "@acp/core";
import { printJson, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { buildPipeline, loadDecisionInputs } from "../decision/load.js";
import { parseJsonOption } from "../decision/read-input.js";
import { presentDecision } from "../decision/present.js";
import { unverifiedServerPipeline } from "../wiring/serve-policy.js";

interface SimulateOptions {
  tool: string;
  server?: string;
  category?: string;
  args?: string;
  annotations?: string;
  at?: string;
  policy?: string;
  graph?: string;
  config?: string;
  domain?: string;
  action?: string;
  confidence?: string;
  contract?: string;
  unverifiedServer?: boolean;
}

function parseTime(text: string | undefined, ctx: CliContext): Date {
  if (text === undefined) return ctx.io.now();
  const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
  const at = new Date(text);
  if (!iso.test(text) || Number.isNaN(at.getTime())) {
    throw new CliError(
      `--at: \`${text}\` is not an ISO-8601 time with a zone (e.g. 2026-03-01T09:30:00Z)`,
      EXIT.invalid,
    );
  }
  return at;
}

/** The MCP tool annotations that are hints (booleans). */
const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];

function buildRequest(options: SimulateOptions): Record<string, unknown> {
  const request: Record<string, unknown> = { tool: options.tool, arguments: {} };
  if (options.server !== undefined) request["server"] = options.server;
  if (options.category !== undefined) {
    if (!(CATEGORIES as readonly string[]).includes(options.category)) {
      throw new CliError(
        `--category: unknown category \`${options.category}\` (expected ${CATEGORIES.join(", ")})`,
        EXIT.invalid,
      );
    }
    request["category"] = options.category;
  }
  if (options.args !== undefined) {
    const args = parseJsonOption(options.args, "--args");
    if (typeof args !== "object" || args === null || Array.isArray(args)) {
      throw new CliError('--args: expected a JSON object of arguments like {"to":"bob@example.com"}', EXIT.invalid);
    }
    request["arguments"] = args;
  }
  if (options.annotations !== undefined) {
    const annotations = parseJsonOption(options.annotations, "--annotations");
    if (typeof annotations !== "object" || annotations === null || Array.isArray(annotations)) {
      throw new CliError('--annotations: expected a JSON object like {"destructiveHint":true}', EXIT.invalid);
    }
    for (const [key, value] of Object.entries(annotations)) {
      const ok = HINTS.includes(key) ? typeof value === "boolean" : key === "title" && typeof value === "string";
      if (!ok) {
        throw new CliError(
          `--annotations: \`${key}\` must be ${key === "title" ? "a string" : HINTS.includes(key) ? "true or false" : `one of ${HINTS.join(", ")}, title`}`,
          EXIT.invalid,
        );
      }
    }
    request["annotations"] = annotations;
  }
  if (options.domain !== undefined || options.action !== undefined) {
    if (options.domain === undefined || options.action === undefined) {
      throw new CliError("--domain and --action go together", EXIT.usage);
    }
    const graph: Record<string, unknown> = { domain: options.domain, action: options.action };
    if (options.confidence !== undefined) {
      const confidence = Number(options.confidence);
      if (options.confidence.trim() === "" || !Number.isFinite(confidence) || confidence < 0 || confidence > 1) {
        throw new CliError(`--confidence: \`${options.confidence}\` is not a number between 0 and 1`, EXIT.invalid);
      }
      graph["confidence"] = confidence;
    }
    request["graph"] = graph;
  }
  if (options.contract !== undefined) request["contract"] = parseJsonOption(options.contract, "--contract");
  return request;
}

/** Registers `acp policy simulate`. */
export function registerPolicySimulate(parent: Command, ctx: CliContext): void {
  parent
    .command("simulate")
    .description("run one request through the pipeline and print the decision as JSON")
    .requiredOption("--tool <name>", "the tool the agent calls")
    .option("--server <name>", "the upstream MCP server")
    .option("--category <category>", `explicit category (${CATEGORIES.join(", ")})`)
    .addOption(new Option("--args <json>", "the tool arguments as a JSON object").default("{}", "{}"))
    .option(
      "--annotations <json>",
      "the tool's MCP annotations as the upstream lists them (readOnlyHint, destructiveHint, …), which classify it; " +
        "acp proxy sets aside readOnlyHint: true of a server not marked `trusted: true`, so leave it out to judge one",
    )
    .option("--at <iso-8601>", "the time of the call (default: now); decides time_of_day conditions")
    .option(
      "--policy <file>",
      "policy file (default: defaults.policy of config.yml, relative to the home, else $ACP_HOME/policy.yml)",
    )
    .option("--graph <file>", "consent graph (default: $ACP_HOME/consent-graph.json when present)")
    .option(
      "--config <file>",
      "take the graph's mapping and threshold (`graph:`) from this file, as `acp proxy --config FILE` does (default: $ACP_HOME/config.yml)",
    )
    .option("--domain <domain>", "consent-graph domain of the action (with --action)")
    .option("--action <action>", "consent-graph action (with --domain)")
    .option("--confidence <0..1>", "the agent's confidence for the consent graph")
    .option("--contract <json>", "an Agent Action Contract v1 event to judge as well")
    .option(
      "--unverified-server",
      "answer as acp serve answers a caller whose server is only its word (the agents' token, an agent " +
        "without serve.agent_servers): judged on every reading of --server, the strictest standing",
    )
    .option("--json", "print the decision as JSON (the default; accepted for symmetry with other commands)")
    .addHelpText(
      "after",
      `
Prints: route (accept|ask|defer|refuse), action (allow|ask|deny), rule (the deciding
source:rule), category, risk_level, reasons (every source's, strictest first) and sources.
Nothing is executed and no state is kept between runs (rate limits start empty).

--server is taken as a fact, as acp proxy knows the server it started and as acp serve trusts it from an
agent held to servers (serve.agent_servers). For every other acp serve caller (the agents' token, an agent
without servers) the server is only its word: add --unverified-server to answer as acp serve answers it
(a deny or ask rule with server: holds whatever --server names, or none; the call judged as named, as for
no server and as each server a classify: or graph.mapping entry names, the strictest answer standing with
the reason server_unverified; --annotations a claim that can only tighten the decision).

Exit codes: 0 the decision was printed (whatever the route), 1 the policy, graph or --config file is
missing or unreadable, 2 usage (no --tool, --domain without --action, an unknown option), 4 invalid input
(malformed --args, --annotations, --at, --category, --confidence or --contract, or an invalid policy,
graph or \`graph:\` section, each problem as FILE:LINE:COL: message).

Examples:
  acp policy simulate --tool send_email --args '{"to":"mark@attacker.example"}'
  acp policy simulate --tool edit_file --annotations '{"readOnlyHint":false,"destructiveHint":true}'
  acp policy simulate --tool deploy_app --server ci --at 2026-03-01T23:30:00Z --policy ~/.acp/policy.yml
  acp policy simulate --tool refund_order --server docs --unverified-server   # as acp serve's agents' token
  echo '{"imessage": {"autonomous": ["read"], "requires_approval": ["send_vip"], "blocked": ["delete_all"]}}' > graph.json
  acp policy simulate --tool x --domain imessage --action send_vip --confidence 0.9 --graph graph.json
  printf 'version: "1"\\ngraph:\\n  mapping:\\n    - { tool: send_message, domain: imessage, action: send_vip }\\n' > team.yml
  acp policy simulate --tool send_message --args '{"to":"boss"}' --graph graph.json --config team.yml   # graph.mapping from team.yml`,
    )
    .action(async (options: SimulateOptions) => {
      const now = parseTime(options.at, ctx);
      const request = buildRequest(options);
      const inputs = await loadDecisionInputs(ctx.io, {
        policy: options.policy,
        graph: options.graph,
        config: options.config,
      });
      const pipeline =
        options.unverifiedServer === true
          ? unverifiedServerPipeline(inputs, createMemoryRateLimiter())
          : buildPipeline(inputs);
      const decision = await pipeline.decide(request, now);
      printJson(ctx, presentDecision(decision));
      ctx.exitCode = EXIT.ok;
    });
}
