import { existsSync, readFileSync } from "node:fs";
import type { Command } from "commander";
import { AUDIT_PROBLEMS, verifyAuditChain, type AuditVerification, type VerifyAuditOptions } from "@acp/core";
import { anchorPathOf, homePaths } from "@acp/store";
import { printError, printJson, printLine, resolveHome, resolvePath, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

interface VerifyOptions {
  readonly publicKey?: string;
  readonly anchor?: string;
  readonly json?: boolean;
}

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message;
    throw new CliError(`cannot read ${what} \`${path}\`: ${why}`, EXIT.error);
  }
}

/** Reads the public key: an explicit file must be valid; the home's key is used when present. */
function readPublicKey(ctx: CliContext, explicit: string | undefined, home: string): { key?: string; path?: string } {
  const path = explicit !== undefined ? resolvePath(ctx.io, explicit) : homePaths(home).publicKey;
  if (explicit === undefined && !existsSync(path)) return {};
  const hex = readText(path, "public key").trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
    throw new CliError(`${path}: public key is not 64 hex digits (a raw Ed25519 key)`, EXIT.invalid);
  }
  return { key: hex.toLowerCase(), path };
}

function describeOk(file: string, r: AuditVerification): string[] {
  const out = [`${file}: intact: ${r.count} events, head ${r.head ?? "(empty log)"}`];
  const cp = r.lastCheckpoint;
  out.push(
    cp === null ? "no checkpoint yet" : `last checkpoint: line ${cp.line} (${cp.count} events, ${cp.timestamp})`,
  );
  if (r.eventsAfterLastCheckpoint > 0) {
    out.push(`${r.eventsAfterLastCheckpoint} events after the last checkpoint are not yet covered by a signature`);
  }
  return out;
}

function runVerify(ctx: CliContext, fileArg: string | undefined, options: VerifyOptions): void {
  const home = resolveHome(ctx.io);
  const file = fileArg !== undefined ? resolvePath(ctx.io, fileArg) : homePaths(home).audit;
  const text = readText(file, "audit log");
  const key = readPublicKey(ctx, options.publicKey, home);
  const anchorPath = options.anchor !== undefined ? resolvePath(ctx.io, options.anchor) : anchorPathOf(file);
  const anchor = options.anchor !== undefined || existsSync(anchorPath) ? readText(anchorPath, "anchor") : undefined;
  const lines = text.split("\n");
  const endsWithNewline = lines.at(-1) === "";
  if (endsWithNewline) lines.pop();
  const verifyOptions: VerifyAuditOptions = {
    ...(key.key === undefined ? {} : { publicKey: key.key }),
    ...(anchor === undefined ? {} : { anchor }),
  };
  const result = verifyAuditChain(lines, verifyOptions);
  ctx.exitCode = result.ok ? EXIT.ok : EXIT.refused;
  if (options.json === true) {
    printJson(ctx, {
      file,
      public_key_file: key.path ?? null,
      anchor_file: anchor === undefined ? null : anchorPath,
      ...result,
    });
    return;
  }
  if (result.problem !== null) {
    const p = result.problem;
    const where = p.where === "anchor" ? `${anchorPath}` : `${file}:${p.line}`;
    printError(ctx, `${where}: ${p.code}: ${p.message}`);
    if (!endsWithNewline && p.line === lines.length)
      printError(ctx, "hint: the last line has no newline: a write was interrupted; the next writer moves it aside");
    printError(ctx, `${result.count} lines before it are intact`);
    return;
  }
  for (const line of describeOk(file, result)) printLine(ctx, line);
  if (key.key === undefined)
    printError(
      ctx,
      `warning: no public key (\`${homePaths(home).publicKey}\` missing): checkpoint signatures not checked`,
    );
  if (anchor === undefined)
    printError(ctx, "warning: no checkpoint anchor beside the log: a cut after the last checkpoint cannot be detected");
}

/** Registers `acp audit verify [FILE]`. */
export function registerAuditVerify(parent: Command, ctx: CliContext): void {
  parent
    .command("verify")
    .description("verify the audit chain, its checkpoints and their signatures; exit 3 naming the first bad line")
    .argument("[file]", "the audit log (default $ACP_HOME/audit.jsonl)")
    .option(
      "--public-key <file>",
      "hex Ed25519 public key checkpoints are signed with (default $ACP_HOME/keys/public.key)",
    )
    .option("--anchor <file>", "the latest signed checkpoint kept beside the log (default FILE.checkpoint)")
    .option("--json", "print the verification as JSON")
    .addHelpText(
      "after",
      [
        "",
        "Checks every line: §7.4 schema, canonical form, its own hash, the link to the line before, and each",
        "signed checkpoint. Exit 0 intact, 3 tampered or damaged, 1 unreadable, 4 a malformed key file.",
        "",
        "Problems:",
        ...AUDIT_PROBLEMS.map((p) => `  ${p.code.padEnd(27)} ${p.meaning}`),
        "",
        "Examples:",
        "  acp audit verify",
        "  acp audit verify ./audit.jsonl --public-key ./public.key --json",
      ].join("\n"),
    )
    .action((file: string | undefined, options: VerifyOptions) => runVerify(ctx, file, options));
}
