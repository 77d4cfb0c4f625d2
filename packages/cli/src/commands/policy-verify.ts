import { Option, type Command } from "commander";
import {
  buildVerifyModel,
  checkIntentAgainstPolicy,
  createTokenProbe,
  exploreModel,
  formatCounterexample,
  formatIssue,
  INVARIANT_DESCRIPTIONS,
  INVARIANT_IDS,
  parsePositionedDocument,
  positionIssues,
  type BuiltModel,
  type Issue,
  type Policy,
  type PositionedDocument,
  type VerifyExecutor,
  type VerifyReport,
} from "@acp/core";
import { printError, printLine, resolvePath, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { loadPolicyFile } from "../decision/load.js";
import { readInputFile } from "../decision/read-input.js";
import { writeOutputFileSync } from "../decision/write-output.js";
import { createReplayer } from "../replay/driver.js";
import { createReplaySessions } from "../replay/session-runtime.js";
import { oldNameOption, renamedValue } from "./renamed-option.js";

interface VerifyOptions {
  policy: string;
  intent: string;
  /** The settings file, from --session-settings (or the deprecated --session). */
  session?: string;
  sessionSettings?: string;
  trustedServer: string[];
  depth: string;
  maxStates: string;
  out?: string;
  declineAsks?: boolean;
  json?: boolean;
}

/** Default bound: sessions of up to this many calls. */
export const DEFAULT_VERIFY_DEPTH = 4;
/** Default most distinct states before the check stops unfinished. */
export const DEFAULT_MAX_STATES = 200_000;
const MAX_DEPTH = 8;

const HELP_AFTER = `
Builds a finite model from the policy, the intent and the session settings, and checks every session of
up to --depth calls, each call judged by the real pipeline and session runtime (the path \`acp replay\`
takes). The model's actions are every action the intent, the transition rules, the policy's rules and
classify: name (a glob adds one sample per category it reaches that no named action covers: \`mail.*\`
gives \`mail.send_x\`, …), plus \`other.other_tool\`, which nothing names. Every call is tried with no
arguments and with a value of each provenance class: one the user typed, one from the intent's
trusted_values, and — once untrusted content was read — one that only untrusted content held. An
accepted call executes; a call routed ask or defer executes as if a person approved it (with
--decline-asks it does not: a person declines every question); a refused one does not.

Invariants:
  outside_intent_executed      ${INVARIANT_DESCRIPTIONS.outside_intent_executed}
  untrusted_to_consequential   ${INVARIANT_DESCRIPTIONS.untrusted_to_consequential}
  token_reused                 ${INVARIANT_DESCRIPTIONS.token_reused}
  untrusted_read_then_send     ${INVARIANT_DESCRIPTIONS.untrusted_read_then_send}

A broken invariant prints its shortest counterexample as a replay trace (JSON lines); --out FILE writes
the first one, and \`acp replay --approve-asks\` with the same --policy, --intent, --session-settings and
--trusted-server shows the violating route on its last call.

Exit codes:
  0  every invariant holds for every session of up to --depth calls
  1  the model is too large (more than --max-states states): nothing is claimed; or a file is missing,
     or --out cannot be written
  2  usage: a missing --policy or --intent, a bad --depth or --max-states
  3  an invariant is broken (counterexample printed)
  4  invalid input: a policy, intent or session file that does not validate, or an intent that
     allows an action the policy refuses outright (FILE:LINE:COL: message)

Examples:
  acp intent new -t summarise-my-day --trusted recipients=me@example.com -o day.yml   # an intent to check
  acp policy verify --policy ~/.acp/policy.yml --intent day.yml --depth 2   # acp init's policy: every invariant holds
  printf 'version: "1"\\ndefault_action: allow\\nrules: []\\n' > allow-all.yml   # a policy that never asks
  acp policy verify --policy allow-all.yml --intent day.yml --depth 2 --out cex.jsonl   # broken: exit 3
  acp replay --approve-asks --policy allow-all.yml --intent day.yml cex.jsonl     # the counterexample, replayed
  acp policy verify --policy allow-all.yml --intent day.yml --depth 2 --max-states 50000 --json | jq '.valid'

Docs: acp docs reference/cli/policy-verify, acp docs guides/policy-verify`;

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function count(text: string, option: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isInteger(value) || value < min || value > max) {
    throw new CliError(`${option}: expected a whole number from ${min} to ${max}, got \`${text}\``, EXIT.usage);
  }
  return value;
}

function invalid(file: string, issues: readonly Issue[]): CliError {
  return new CliError(issues.map((i) => formatIssue(i, file)).join("\n"), EXIT.invalid);
}

async function readDocument(ctx: CliContext, file: string, what: string): Promise<PositionedDocument> {
  const text = await readInputFile(resolvePath(ctx.io, file), what);
  const parsed = parsePositionedDocument(text, what);
  if (!parsed.ok) throw invalid(file, parsed.issues);
  return parsed.value;
}

/** The session settings exactly as `acp replay` builds them from the same flags. */
function replaySettings(policy: Policy, given: unknown, trusted: readonly string[]): Record<string, unknown> {
  const base = typeof given === "object" && given !== null && !Array.isArray(given) ? given : {};
  const settings: Record<string, unknown> = { require_plan: false, ...base };
  const listed = settings["trusted_servers"];
  settings["trusted_servers"] = [...(Array.isArray(listed) ? (listed as unknown[]) : []), ...trusted];
  if (settings["classify"] === undefined) settings["classify"] = [...policy.classify];
  return settings;
}

interface Loaded {
  readonly policy: Policy;
  readonly policyFile: string;
  readonly intent: unknown;
  readonly settings: Record<string, unknown>;
  readonly built: BuiltModel;
}

async function load(ctx: CliContext, options: VerifyOptions): Promise<Loaded> {
  const policyFile = resolvePath(ctx.io, options.policy);
  const policy = await loadPolicyFile(policyFile);
  const intentDoc = await readDocument(ctx, options.intent, "intent");
  const sessionDoc =
    options.session === undefined ? undefined : await readDocument(ctx, options.session, "session settings");
  if (
    sessionDoc !== undefined &&
    (typeof sessionDoc.value !== "object" || sessionDoc.value === null || Array.isArray(sessionDoc.value))
  ) {
    throw invalid(options.session ?? "", [
      {
        code: "invalid_session_config",
        path: [],
        message: "session settings: settings must be a mapping",
        line: 1,
        column: 1,
      },
    ]);
  }
  const settings = replaySettings(policy, sessionDoc?.value, options.trustedServer);
  const built = buildVerifyModel({ policy, intent: intentDoc.value, settings });
  if (!built.ok) {
    const of = (doc: string): Issue[] =>
      built.issues.filter((i) => i.path[0] === doc).map((i) => ({ ...i, path: i.path.slice(1) }));
    const lines = [
      ...positionIssues(of("intent"), intentDoc).map((i) => formatIssue(i, options.intent)),
      ...(sessionDoc === undefined ? of("settings") : positionIssues(of("settings"), sessionDoc)).map((i) =>
        formatIssue(i, options.session ?? "session settings"),
      ),
      ...built.issues.filter((i) => i.path[0] !== "intent" && i.path[0] !== "settings").map((i) => formatIssue(i)),
    ];
    const tooLarge = built.issues.some((i) => i.code === "verify_model_too_large");
    throw new CliError(lines.join("\n"), tooLarge ? EXIT.error : EXIT.invalid);
  }
  const contradictions = checkIntentAgainstPolicy(policy, built.value, ctx.io.now());
  if (contradictions.length > 0) throw invalid(options.intent, positionIssues(contradictions, intentDoc));
  return { policy, policyFile, intent: intentDoc.value, settings, built: built.value };
}

function executorFor(ctx: CliContext, loaded: Loaded, options: VerifyOptions): VerifyExecutor {
  const now = ctx.io.now();
  const sessions = createReplaySessions({ intent: loaded.intent, settings: loaded.settings, now });
  const replayer = createReplayer({
    inputs: { policy: loaded.policy, policyFile: loaded.policyFile },
    sessions,
    trustedServers: new Set(options.trustedServer),
    now,
    approveAsks: options.declineAsks !== true,
  });
  return {
    run: async (events) => {
      const lines = events.map((event, i) => ({ ...event, line: i + 1 }));
      const calls = await replayer.replayTrace({ name: "verify", events: lines });
      return calls.map((c) => ({ route: c.route, reasons: c.reasons }));
    },
    probeToken: createTokenProbe({ intent: loaded.intent, settings: loaded.settings, now }),
  };
}

function replayCommand(options: VerifyOptions, out: string): string {
  const parts = ["acp replay", `--policy ${options.policy}`, `--intent ${options.intent}`];
  if (options.declineAsks !== true) parts.splice(1, 0, "--approve-asks");
  if (options.session !== undefined) parts.push(`--session-settings ${options.session}`);
  for (const server of options.trustedServer) parts.push(`--trusted-server ${server}`);
  return [...parts, out].join(" ");
}

/** What is legal but worth a person's second look (printed, never an error). */
function warningsOf(loaded: Loaded): string[] {
  const other = loaded.built.model.actions.find((a) => a.other);
  if (other === undefined || !other.inIntent) return [];
  const allowed = loaded.built.intent.intent.allowed_actions.map((p) => `\`${p}\``).join(", ");
  return [
    `the intent (${allowed}) allows \`${other.name}\`, an action nothing names: only the policy and the session settings bound what the agent may do`,
  ];
}

function printHuman(ctx: CliContext, report: VerifyReport, loaded: Loaded, options: VerifyOptions): void {
  const model = loaded.built.model;
  for (const warning of warningsOf(loaded)) printError(ctx, `warning: ${warning}`);
  const names = model.actions.map((a) => a.name).join(", ");
  printLine(
    ctx,
    `model: ${model.actions.length} actions (${names}), ${model.values.length} value classes, up to ${report.depth} calls`,
  );
  if (model.unsampled.length > 0)
    printLine(ctx, `note: not sampled: ${model.unsampled.map((p) => `\`${p}\``).join(", ")}`);
  const broken = new Set(report.violations.map((v) => v.invariant));
  for (const id of INVARIANT_IDS) {
    const violation = report.violations.find((v) => v.invariant === id);
    if (violation === undefined) {
      printLine(ctx, `${report.outcome === "too_large" ? "?" : "ok"} ${id}: ${INVARIANT_DESCRIPTIONS[id]}`);
      continue;
    }
    printLine(ctx, `FAIL ${id}: ${violation.message}`);
    printLine(ctx, `  route ${violation.route}: ${violation.reasons.map((r) => `${r.source}/${r.code}`).join(", ")}`);
    printLine(ctx, "  counterexample:");
    for (const line of formatCounterexample(violation).trimEnd().split("\n")) printLine(ctx, `  ${line}`);
  }
  const held = INVARIANT_IDS.length - broken.size;
  const explored = `explored ${report.states} states, ${report.calls} judged calls`;
  if (report.limitReached) {
    printLine(ctx, `${explored}: stopped unfinished at --max-states, nothing is verified`);
  } else if (!report.complete) {
    printLine(ctx, `${explored}: stopped early, every invariant is broken`);
  } else {
    printLine(ctx, `${explored}: ${held} of ${INVARIANT_IDS.length} invariants hold within ${report.depth} calls`);
  }
  if (options.out !== undefined && report.violations.length > 0) {
    printLine(
      ctx,
      `wrote the ${report.violations[0]?.invariant ?? ""} counterexample to ${options.out}; replay it with:`,
    );
    printLine(ctx, `  ${replayCommand(options, options.out)}`);
  }
}

function jsonReport(report: VerifyReport, loaded: Loaded): Record<string, unknown> {
  const model = loaded.built.model;
  return {
    // the verdict as every verifying command says it: null when too large (nothing is claimed)
    valid: report.outcome === "too_large" ? null : report.outcome === "verified",
    outcome: report.outcome,
    depth: report.depth,
    complete: report.complete,
    limit_reached: report.limitReached,
    states: report.states,
    calls: report.calls,
    actions: model.actions.map((a) => ({
      name: a.name,
      categories: a.categories,
      in_intent: a.inIntent,
      untrusted_results: a.untrustedResult,
    })),
    value_classes: model.values.map((v) => v.cls),
    unsampled: model.unsampled,
    warnings: warningsOf(loaded),
    invariants: INVARIANT_IDS.map((id) => {
      const v = report.violations.find((x) => x.invariant === id);
      const holds = v === undefined ? (report.outcome === "too_large" ? null : true) : false;
      const base = { id, description: INVARIANT_DESCRIPTIONS[id], holds };
      return v === undefined
        ? base
        : { ...base, message: v.message, route: v.route, reasons: v.reasons, counterexample: v.events };
    }),
  };
}

async function verify(ctx: CliContext, options: VerifyOptions): Promise<void> {
  const depth = count(options.depth, "--depth", 1, MAX_DEPTH);
  const maxStates = count(options.maxStates, "--max-states", 1, 100_000_000);
  const loaded = await load(ctx, options);
  const executor = executorFor(ctx, loaded, options);
  const approveAsks = options.declineAsks !== true;
  const report = await exploreModel(loaded.built.model, executor, { depth, maxStates, approveAsks });
  const first = report.violations[0];
  if (options.out !== undefined && first !== undefined) {
    writeOutputFileSync(resolvePath(ctx.io, options.out), formatCounterexample(first), { mode: 0o666 });
  }
  if (options.json === true)
    printLine(ctx, JSON.stringify({ ...jsonReport(report, loaded), approve_asks: approveAsks }));
  else printHuman(ctx, report, loaded, options);
  if (report.outcome === "violated") {
    ctx.exitCode = EXIT.refused;
  } else if (report.outcome === "too_large") {
    throw new CliError(
      `the model is too large: more than ${maxStates} states within ${depth} calls, so nothing is verified (lower --depth, raise --max-states, or name fewer actions)`,
      EXIT.error,
    );
  } else {
    if (options.json !== true)
      printError(ctx, `verified: every invariant holds for every session of up to ${depth} calls`);
    ctx.exitCode = EXIT.ok;
  }
}

/** Registers `acp policy verify`: a bounded, exhaustive check of a policy, an intent and session settings. */
export function registerPolicyVerify(parent: Command, ctx: CliContext): void {
  parent
    .command("verify")
    .description("check a policy, an intent and session settings exhaustively for bounded sessions")
    .requiredOption("--policy <file>", "the policy file")
    .requiredOption("--intent <file>", "the intent (JSON or YAML) the sessions run under")
    .option(
      "--session-settings <file>",
      "the session runtime's settings (JSON or YAML): transitions, provenance, trusted servers",
    )
    .addOption(oldNameOption("--session <file>"))
    .addOption(
      new Option(
        "--trusted-server <name>",
        "a server whose answers are trusted, but not its errors nor its log lines and other side messages (repeatable)",
      )
        .argParser(collect)
        .default([], "none"),
    )
    // defaults shown as numbers, `(default: 4)`, not as the strings commander parses them from
    .addOption(
      new Option("--depth <n>", "most calls in one session").default(
        String(DEFAULT_VERIFY_DEPTH),
        String(DEFAULT_VERIFY_DEPTH),
      ),
    )
    .addOption(
      new Option("--max-states <n>", "most distinct states before stopping unfinished (exit 1)").default(
        String(DEFAULT_MAX_STATES),
        String(DEFAULT_MAX_STATES),
      ),
    )
    .option("--out <file>", "write the first counterexample there (replay JSON lines)")
    .option("--decline-asks", "a person declines every question: asked calls never execute")
    .option(
      "--json",
      "print the report as one JSON object (the verdict in `valid`: true, false, or null when too large)",
    )
    .addHelpText("after", HELP_AFTER)
    .action(async (options: VerifyOptions) => {
      const names = { old: "--session", current: "--session-settings" };
      const settings = renamedValue(ctx, names, options.session, options.sessionSettings);
      const resolved: VerifyOptions = { ...options };
      delete resolved.session;
      delete resolved.sessionSettings;
      await verify(ctx, settings === undefined ? resolved : { ...resolved, session: settings });
    });
}
