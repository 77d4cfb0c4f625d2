import { open } from "node:fs/promises";
import type { Command } from "commander";
import {
  checkToolPrecheck,
  MAX_CONTRACT_EVENT_BYTES,
  parseContractEventJson,
  refuseContractEnvelope,
  shouldExecuteTool,
  type ContractEnvelope,
  type Issue,
} from "@acp/core";
import { printError, resolvePath, type CliContext } from "../context.js";
import { readFailure } from "../decision/read-input.js";
import { CliError, EXIT, type ExitCode } from "../exit-codes.js";

const EXAMPLE_EVENT =
  '{"tool_name":"send_email","tool_category":"write","authorization_state":"user_claimed",' +
  '"evidence_refs":["draft_id:123"],"risk_domain":"customer_support",' +
  '"proposed_arguments":{"to":"customer@example.com"},"recommended_route":"accept"}';

const HELP_AFTER = `
Reads one Agent Action Contract v1 event (JSON) and prints the decision envelope (JSON) on stdout:
gate_decision, recommended_action (accept|ask|defer|refuse), hard_blockers, architecture_decision
(route, reasons, inferred_route, runtime_route), aix, validation_errors and an audit-safe record.
Problems with the event are also printed on stderr, one per line.

Exit codes:
  0  the tool may execute (gate_decision pass, route accept, no blockers, no validation errors)
  3  the tool may not execute (ask, defer or refuse); the envelope says why
  4  the event is invalid (malformed JSON, a repeated member name, schema errors, not I-JSON or an
     integer beyond 2^53-1 in the arguments, over ${MAX_CONTRACT_EVENT_BYTES} bytes); envelope still printed
  1  the file cannot be read
  2  usage: an unknown option, or no event given at a terminal

Examples:
  # The document's "write missing confirmation" example: prints route ask, exits 3
  $ echo '${EXAMPLE_EVENT}' > event.json
  $ acp check event.json
  $ acp check --compact < event.json

  # Gate a tool on the exit code
  $ acp check event.json && run-the-tool

Docs: acp docs reference/cli/check, acp docs reference/action-contract`;

/** Reads at most the cap plus one byte of a file, so an oversized file is never read whole. */
async function readCapped(path: string): Promise<Uint8Array> {
  const handle = await open(path, "r");
  try {
    const buffer = new Uint8Array(MAX_CONTRACT_EVENT_BYTES + 1);
    let total = 0;
    while (total < buffer.length) {
      const { bytesRead } = await handle.read(buffer, total, buffer.length - total, null);
      if (bytesRead === 0) break;
      total += bytesRead;
    }
    return buffer.subarray(0, total);
  } finally {
    await handle.close();
  }
}

function tooLarge(): Issue {
  return {
    code: "contract_too_large",
    path: [],
    message: `event is larger than the ${MAX_CONTRACT_EVENT_BYTES}-byte limit`,
  };
}

/** The event text from FILE, or stdin for `-` / no argument; an Issue when it is unusable as text. */
async function readEventText(ctx: CliContext, file: string | undefined): Promise<string | Issue> {
  if (file === undefined || file === "-") {
    if (file === undefined && ctx.io.stdinIsTTY) {
      throw new CliError("no event given: pass FILE, or pipe the event JSON on stdin (see --help)", EXIT.usage);
    }
    return ctx.io.readStdin();
  }
  let bytes: Uint8Array;
  try {
    bytes = await readCapped(resolvePath(ctx.io, file));
  } catch (err) {
    throw new CliError(`cannot read \`${file}\`: ${readFailure(err)}`, EXIT.error);
  }
  if (bytes.length > MAX_CONTRACT_EVENT_BYTES) return tooLarge();
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { code: "contract_malformed_json", path: [], message: "malformed JSON: the input is not valid UTF-8" };
  }
}

/** `evidence_refs[0].kind` from `["evidence_refs", 0, "kind"]`. */
function renderPath(path: readonly (string | number)[]): string {
  return path.map((part, i) => (typeof part === "number" ? `[${part}]` : i === 0 ? part : `.${part}`)).join("");
}

function describeIssue(issue: Issue, label: string): string {
  const where = issue.line !== undefined ? `${label}:${issue.line}:${issue.column ?? 1}` : label;
  const path = issue.path.length > 0 ? `${renderPath(issue.path)}: ` : "";
  const help = issue.help !== undefined ? ` (${issue.help})` : "";
  return `${where}: ${path}${issue.message}${help}`;
}

/** Decides the exit code and writes the stderr summary for an envelope. */
function finish(ctx: CliContext, envelope: ContractEnvelope, label: string): ExitCode {
  if (envelope.validation_errors.length > 0) {
    for (const issue of envelope.validation_errors) printError(ctx, `acp check: ${describeIssue(issue, label)}`);
    return envelope.validation_errors.some((i) => i.code === "check_failed") ? EXIT.error : EXIT.invalid;
  }
  if (shouldExecuteTool(envelope)) return EXIT.ok;
  printError(ctx, `acp check: route \`${envelope.recommended_action}\`: ${envelope.hard_blockers.join(", ")}`);
  return EXIT.refused;
}

/** Registers `acp check [FILE|-]`: an Agent Action Contract v1 event in, the decision envelope out. */
export function registerCheck(parent: Command, ctx: CliContext): void {
  parent
    .command("check")
    .description(
      "check an Agent Action Contract v1 event: the decision envelope out, exit 0 only when the tool may execute",
    )
    .argument("[file]", "event JSON file; `-` or nothing reads stdin")
    .option("--compact", "print the envelope on one line")
    .option("--json", "print the envelope as JSON (the default; accepted for symmetry with other commands)")
    .addHelpText("after", HELP_AFTER)
    .action(async (file: string | undefined, options: { compact?: boolean }) => {
      const label = file === undefined || file === "-" ? "<stdin>" : file;
      const text = await readEventText(ctx, file);
      let envelope: ContractEnvelope;
      if (typeof text !== "string") envelope = refuseContractEnvelope([text]);
      else {
        const parsed = parseContractEventJson(text);
        envelope = parsed.ok ? checkToolPrecheck(parsed.value) : refuseContractEnvelope(parsed.issues);
      }
      ctx.io.stdout.write(`${JSON.stringify(envelope, null, options.compact === true ? undefined : 2)}\n`);
      ctx.exitCode = finish(ctx, envelope, label);
    });
}
