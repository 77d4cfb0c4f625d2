import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readlinkSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import {
  AUDIT_PROBLEMS,
  failForMissingAnchor,
  parseAuditLine,
  readCheckpoint,
  verifyAuditChain,
  type AuditConsentCount,
  type AuditConsentUnchecked,
  type AuditRemainder,
  type AuditVerification,
  type VerifyAuditOptions,
  printable,
} from "@acp/core";
import {
  anchoredMarkerPathOf,
  anchorPathOf,
  FileNotOwnedError,
  FileTooOpenError,
  hasAnchoredMarker,
  homePaths,
  NOT_WRITABLE_BY_OTHERS,
  readAnchorFile,
  readFileUpTo,
  tooOpenMessage,
  verifyAuditFile,
} from "@acp/store";
import { printError, printJson, printLine, resolveHome, resolvePath, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { readFailure } from "../decision/read-input.js";
import { storageUrlOption } from "./pending-store.js";
import { postgresMovedNote, verifyPostgresChain } from "./audit-verify-postgres.js";
import { storageOf } from "./storage-url.js";

/**
 * The version of `--json`'s shape: 2 added `output_version`, `afterProblem` and the `inserted` problem
 * (27 Nov 2026); 3 added `valid`, the verdict under the name every verifying command gives it (the same
 * value as `ok`, kept for old scripts); 4 added `consentResponses` (`{checked, unchecked}`, `null` without a
 * public key) and the `consent_signature_invalid` problem; 5 added `consentResponses.notCheckable` (each
 * response not checkable: its line and why); 6 added the `anchor_missing` problem and `anchor_marker_file` (the
 * log's `.anchored` marker when it is there, `null` otherwise; 28 Nov 2026). Every field of the earlier versions
 * is unchanged.
 */
export const AUDIT_VERIFY_OUTPUT_VERSION = 6;

interface VerifyOptions {
  readonly publicKey?: string;
  readonly anchor?: string;
  readonly json?: boolean;
  readonly storageUrl?: string;
}

function cannotRead(path: string, what: string, err: unknown): CliError {
  // the home's anchor owned by another user: its message names the file, its owner and the `chown` fix
  if (err instanceof FileNotOwnedError) return new CliError(err.message, EXIT.error);
  return new CliError(`cannot read ${what} \`${path}\`: ${readFailure(err)}`, EXIT.error);
}

/** The home's audit log is missing: nothing was audited yet, or the home is another one. */
export function noAuditLogYet(path: string): CliError {
  return new CliError(
    `no audit log yet at \`${path}\`: acp proxy and acp serve write it with the first call (or name a log FILE)`,
    EXIT.error,
  );
}

/**
 * Fails as reading it would when the log cannot be opened or is a directory (it is read later, line by
 * line). The home's own log must be a regular file (`regularOnly`): a named pipe planted there would make
 * the verification wait for ever (it is opened without waiting, and refused); a FILE a person names may
 * be a pipe (`<(…)`).
 */
function checkReadable(path: string, regularOnly: boolean): void {
  try {
    const fd = openSync(path, regularOnly ? constants.O_RDONLY | constants.O_NONBLOCK : "r");
    try {
      const stat = fstatSync(fd);
      if (stat.isDirectory())
        throw Object.assign(new Error("EISDIR: illegal operation on a directory, read"), { code: "EISDIR" });
      if (regularOnly && !stat.isFile()) throw new Error("not a regular file (a pipe, a socket or a device)");
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    throw cannotRead(path, "audit log", err);
  }
}

/**
 * The home's log made a symbolic link (dangling or not) is refused as acp proxy and acp serve refuse to write
 * it (`audit_log_unsafe`): verifying the link's target as the home's log said "intact" of a log no writer
 * appends to, beside an anchor that is not the target's. A FILE a person names is read wherever it leads.
 */
function refuseLinkedLog(path: string): void {
  let link: string;
  try {
    if (!lstatSync(path).isSymbolicLink()) return;
    link = readlinkSync(path);
  } catch {
    return; // missing or unreadable: told below, as before
  }
  const target = resolve(dirname(path), link);
  throw new CliError(
    `the home's audit log \`${printable(path)}\` is a symbolic link (audit_log_unsafe): acp proxy and acp serve ` +
      "refuse to write it, so it is not verified as the home's log; remove the link (the writers start a new log), " +
      `or verify its target by name: acp audit verify ${printable(target)}`,
    EXIT.error,
  );
}

/** Most bytes of a public key file read (`/dev/zero` or a huge file is not read on: not 64 hex digits). */
const MAX_PUBLIC_KEY_BYTES = 64 * 1024;

/** Reads the anchor file, or fails as unreadable (exit 1). */
function readAnchorOrFail(path: string, named: boolean): string {
  try {
    // the anchor beside the log must be a file; one a person names may be a pipe (`--anchor <(…)`)
    return readAnchorFile(path, { regularOnly: !named });
  } catch (err) {
    throw cannotRead(path, "anchor", err);
  }
}

/** Reads the public key: an explicit file must be valid; the home's key is used when present. */
function readPublicKey(ctx: CliContext, explicit: string | undefined, home: string): { key?: string; path?: string } {
  const path = explicit !== undefined ? resolvePath(ctx.io, explicit) : homePaths(home).publicKey;
  if (explicit === undefined && !existsSync(path)) return {};
  let bytes;
  try {
    // the home's key decides what verifies: one others can change is refused (a key a person names is theirs to vouch for)
    const home = explicit === undefined;
    bytes = readFileUpTo(path, MAX_PUBLIC_KEY_BYTES, {
      regularOnly: home,
      ...(home ? { refuseMode: NOT_WRITABLE_BY_OTHERS } : {}),
    });
  } catch (err) {
    if (err instanceof FileTooOpenError)
      throw new CliError(tooOpenMessage(err, "whoever can change it decides which signatures verify"), EXIT.error);
    throw cannotRead(path, "public key", err);
  }
  const hex = bytes?.toString("utf8").trim() ?? "";
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
    throw new CliError(`${path}: public key is not 64 hex digits (a raw Ed25519 key)`, EXIT.invalid);
  }
  return { key: hex.toLowerCase(), path };
}

/** `n` and the word, in the plural unless `n` is 1: "1 event", "2 events". */
function counted(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function describeOk(file: string, r: AuditVerification): string[] {
  const out = [`${file}: intact: ${counted(r.count, "event")}, head ${r.head ?? "(empty log)"}`];
  const cp = r.lastCheckpoint;
  out.push(
    cp === null
      ? "no checkpoint yet"
      : `last checkpoint: line ${cp.line} (${counted(cp.count, "event")}, ${cp.timestamp})`,
  );
  const after = r.eventsAfterLastCheckpoint;
  if (after > 0) {
    out.push(
      `${counted(after, "event")} after the last checkpoint ${after === 1 ? "is" : "are"} not yet covered by a signature`,
    );
  }
  const consent = r.consentResponses;
  if (consent !== null && consent.checked + consent.unchecked > 0) out.push(...describeConsent(consent));
  return out;
}

/** Why a consent response could not be checked, as `acp audit verify` says it. */
const UNCHECKED_BECAUSE: Readonly<Record<AuditConsentUnchecked | "hashed", string>> = {
  withheld: "the action is withheld: redaction would have changed it, so nothing of it is recorded",
  omitted:
    "a value (an argument or an edit) was cut to fit the audit line, replaced by its length and SHA-256: the signed action cannot be rebuilt",
  hashed:
    "a value of the action was cut to fit the audit line: the signature verifies against the action hash recorded beside it, but the cut action cannot be matched to that hash",
  missing: "written before consent events recorded the action",
};

/** Most line numbers named for one reason. */
const LINES_NAMED = 10;

/** The consent responses checked, and each reason some could not be, with the lines it holds for. */
export function describeConsent(consent: AuditConsentCount): string[] {
  const head =
    `consent responses: ${counted(consent.checked, "signature")} checked against the action recorded beside them` +
    (consent.unchecked > 0 ? `, ${consent.unchecked} not checkable:` : "");
  const out = [head];
  for (const why of ["hashed", "omitted", "withheld", "missing"] as const) {
    const lines = consent.notCheckable
      .filter((u) => (u.signatureChecked === true ? "hashed" : u.why) === why)
      .map((u) => u.line);
    if (lines.length === 0) continue;
    const named = lines.slice(0, LINES_NAMED).join(", ") + (lines.length > LINES_NAMED ? ", …" : "");
    out.push(`  ${lines.length} at line${lines.length === 1 ? "" : "s"} ${named}: ${UNCHECKED_BECAUSE[why]}`);
  }
  const listed = consent.notCheckable.length;
  if (consent.unchecked > listed) out.push(`  ${consent.unchecked - listed} more not listed`);
  return out;
}

/**
 * What the verifier could still tell of the lines after the first problem: how many, how many link up,
 * and whether later checkpoints' signatures verify on their own. Never a word that the log is intact.
 */
export function describeAfterProblem(after: AuditRemainder, wholeLog = false): string[] {
  const stopped = after.complete ? "" : " (reading stopped at a line too long to read)";
  const later = wholeLog ? "" : "later ";
  if (after.lines === 0) return [`no line ${wholeLog ? "of the log" : "after it"} was read${stopped}`];
  const count = `${after.lines} ${wholeLog ? "" : "more "}${after.lines === 1 ? "line" : "lines"}`;
  const out = [`${wholeLog ? "the log" : "after it"}: ${count}, ${after.linked} linked to the line before${stopped}`];
  const cp = after.lastSignedCheckpoint;
  if (after.signedCheckpoints === null)
    out.push(`${after.checkpoints} ${later}checkpoints, signatures not checked (no public key)`);
  else
    out.push(
      `${after.checkpoints} ${later}checkpoints, ${after.signedCheckpoints} signed with the key` +
        (cp === null ? "" : ` (the last at line ${cp.line}, for ${cp.count} events by its own account)`),
    );
  const anchor = after.anchor;
  if (anchor !== null) out.push(describeAnchorAfter(anchor));
  out.push(
    wholeLog
      ? "the log is not intact: without a good anchor a cut after its last checkpoint cannot be told"
      : "the log is not intact: lines after a break are vouched for by their own content only",
  );
  return out;
}

/** What the log holds when its anchor is missing (`anchor_missing`), and what to do: never "intact". */
function describeMissingAnchor(r: AuditVerification, marker: string | null, postgres: boolean): string[] {
  const cp = r.lastCheckpoint;
  if (postgres) {
    const last = cp === null ? "no checkpoint" : `last checkpoint: row ${cp.line}`;
    return [
      `the chain's own rows verify (${counted(r.count, "event")}, ${last}), but without this node's anchor rows cut ` +
        "from its end cannot be told: not intact",
      "put the anchor back if a copy was kept, or copy another node's of the same name (or name it: --anchor FILE); " +
        `once you know why it is gone, remove \`${marker ?? ""}\`: the next start of acp serve here verifies the chain ` +
        "from row 1 and anchors it again (until then it refuses the database: audit_anchor_missing)",
    ];
  }
  const last = cp === null ? "no checkpoint" : `last checkpoint: line ${cp.line}`;
  const out = [
    `the log's own lines verify (${counted(r.count, "event")}, ${last}), but without the anchor a cut after a checkpoint ` +
      "cannot be told: not intact",
  ];
  out.push(
    marker !== null
      ? `put the anchor back if a copy was kept (or name it: --anchor FILE); once you know why it is gone, remove ` +
          `\`${marker}\`: the next writer verifies the log in full with the home's key and anchors it again ` +
          "(until then acp proxy, acp run and acp serve refuse the log: audit_anchor_missing)"
      : "put the anchor back if a copy was kept (or name it: --anchor FILE); otherwise the next writer (acp proxy, " +
          "acp run, acp serve) verifies the log in full with the home's key and anchors it again, saying so",
  );
  return out;
}

/**
 * Why the home's log (or one with a marker) must have an anchor it lacks, or `null` when it need not: its
 * `.anchored` marker says it had one (deleted since), or it is the home's own log and holds signed
 * checkpoints, which every writer anchors (moved or restored without it, or the anchor deleted). A FILE a
 * person names without a marker beside it (a copy) is only warned about.
 */
function missingAnchorMessage(
  anchorPath: string,
  marker: string | null,
  homeLog: boolean,
  r: AuditVerification,
): string | null {
  if (marker !== null)
    return (
      `\`${anchorPath}\` is missing, though \`${marker}\` records that the log had one: the anchor was deleted ` +
      "(perhaps with the log cut back) or the log moved without it"
    );
  if (homeLog && r.checkpoints > 0)
    return (
      `\`${anchorPath}\` is missing, though the home's log holds ${counted(r.checkpoints, "signed checkpoint")}, ` +
      "which its writers anchor: moved or restored without it, or the anchor deleted (perhaps with the log cut back)"
    );
  return null;
}

/** Where the anchor's checkpoint was found after the problem, or that it was not. */
function describeAnchorAfter(anchor: NonNullable<AuditRemainder["anchor"]>): string {
  const { expectedLine, line } = anchor;
  if (line === null)
    return `the anchor's checkpoint (line ${expectedLine}) is not among them: the log was also cut or rewritten after the problem`;
  if (line === expectedLine) return `the anchor's checkpoint is at its line, ${line}`;
  return `the anchor's checkpoint (line ${expectedLine} by its own count) is at line ${line}: lines were inserted or removed before it`;
}

/**
 * Which key the signatures were checked with, in full: a log rewritten and re-signed by someone who also
 * replaced the home's key verifies with that key, so a person must be able to compare it with one they hold.
 */
function describeKey(hex: string, path: string | undefined, homeKey: string): string {
  const own = path === homeKey ? ", the home's own key: compare it with a copy kept elsewhere" : "";
  return `signatures: checked with ${hex} (\`${path ?? "?"}\`${own})`;
}

/** The line of the checkpoint an anchor holds (`null` without one, or when it is not a checkpoint). */
function anchorLineOf(anchor: string | undefined): number | null {
  if (anchor === undefined) return null;
  const parsed = parseAuditLine(anchor.trim());
  const read = parsed.ok ? readCheckpoint(parsed.value) : undefined;
  return read?.ok === true ? read.value.body.count + 1 : null;
}

function report(
  ctx: CliContext,
  where: {
    file: string;
    anchorPath: string;
    anchor: string | undefined;
    home: string;
    /** The line number of a last line without newline (an interrupted write), if verification read it. */
    unterminatedLine: number | null;
    postgres: boolean;
    /** The anchor's `.anchored` marker when it is there (the log's, or the node's for the database), else `null`. */
    marker?: string | null;
  },
  key: { key?: string; path?: string },
  result: AuditVerification,
  json: boolean,
): void {
  const { file, anchorPath, anchor, home } = where;
  ctx.exitCode = result.ok ? EXIT.ok : EXIT.refused;
  if (json) {
    printJson(ctx, {
      output_version: AUDIT_VERIFY_OUTPUT_VERSION,
      file,
      public_key_file: key.path ?? null,
      public_key: key.key ?? null,
      anchor_file: anchor === undefined ? null : anchorPath,
      anchor_line: anchorLineOf(anchor),
      anchor_marker_file: where.marker ?? null,
      // the verdict as `acp policy validate`, `acp graph lint` and `acp proof verify` say it; `ok` is kept
      valid: result.ok,
      ...result,
    });
    return;
  }
  if (result.problem !== null) {
    const p = result.problem;
    const at = p.where === "anchor" ? `${anchorPath}` : `${file}:${p.line}`;
    // the message may quote the log (an unknown field or event type): no control character of it is printed
    printError(ctx, printable(`${at}: ${p.code}: ${p.message}`));
    if (p.code === "anchor_missing") {
      for (const line of describeMissingAnchor(result, where.marker ?? null, where.postgres))
        printError(ctx, printable(line));
      return;
    }
    if (p.line === where.unterminatedLine)
      printError(ctx, "hint: the last line has no newline: a write was interrupted; the next writer moves it aside");
    // a problem of the anchor itself is found before any line is read: nothing of the log was verified
    if (p.where === "anchor") {
      printError(
        ctx,
        "the log was not verified against it: the anchor is checked first (--anchor another copy, or verify a copy of the log without it)",
      );
      // what the log holds, read all the same: a broken anchor hides nothing of it
      if (result.afterProblem !== null)
        for (const line of describeAfterProblem(result.afterProblem, true)) printError(ctx, line);
    } else {
      printError(ctx, `${result.count} lines before it are intact`);
      if (result.afterProblem !== null)
        for (const line of describeAfterProblem(result.afterProblem)) printError(ctx, line);
    }
    return;
  }
  // the last checkpoint's timestamp is the log's text: without a key (or with a key someone put in the home)
  // nothing vouches for it, and a control or bidi character in it must not reach the terminal raw
  for (const line of describeOk(file, result)) printLine(ctx, printable(line));
  if (key.key !== undefined) printLine(ctx, describeKey(key.key, key.path, homePaths(home).publicKey));
  if (key.key === undefined)
    printError(
      ctx,
      `warning: no public key (\`${homePaths(home).publicKey}\` missing): checkpoint signatures not checked`,
    );
  if (anchor === undefined && where.postgres)
    printError(
      ctx,
      "warning: PostgreSQL keeps no anchor and this home has none for this database (a node's home does: " +
        "`audit-postgres-….checkpoint`): rows cut after the last checkpoint cannot be detected (--anchor: a node's anchor, or a checkpoint row's line kept elsewhere)",
    );
  else if (anchor === undefined && result.lastCheckpoint !== null)
    printError(
      ctx,
      `warning: no checkpoint anchor beside the log (\`${anchorPath}\` missing) though it holds ${result.checkpoints} signed checkpoints: ` +
        `it was moved or copied without it, or the anchor was deleted; a cut or rewrite after the last checkpoint (line ${result.lastCheckpoint.line}) cannot be detected ` +
        "(the next writer verifies the whole log with the home's key and anchors it there; --anchor: a copy kept elsewhere)",
    );
  else if (anchor === undefined)
    printError(ctx, "warning: no checkpoint anchor beside the log: a cut after the last checkpoint cannot be detected");
  else {
    // the anchor only proves the log reaches its own line: one older than the last checkpoint says less
    const line = anchorLineOf(anchor);
    const last = result.lastCheckpoint?.line ?? null;
    if (line !== null && last !== null && line < last)
      printError(
        ctx,
        `warning: the anchor records the checkpoint at line ${line}, older than the last one (line ${last}): a cut after line ${line} cannot be detected`,
      );
    else if (line !== null) printLine(ctx, `anchor: the log reaches the anchor's checkpoint (line ${line})`);
  }
}

async function runVerify(ctx: CliContext, fileArg: string | undefined, options: VerifyOptions): Promise<void> {
  const home = resolveHome(ctx.io);
  // no FILE and a storage URL (flag, ACP_STORAGE_URL, storage.url): the chain acp serve keeps in PostgreSQL
  const storage = fileArg === undefined ? storageOf(ctx, options, home) : null;
  if (storage !== null) {
    const key = readPublicKey(ctx, options.publicKey, home);
    const anchorGiven = options.anchor !== undefined ? resolvePath(ctx.io, options.anchor) : undefined;
    const { where, judged, moved } = await verifyPostgresChain(storage, home, anchorGiven, key.key, readAnchorOrFail);
    // the databases are named as the server names them (a schema may hold any character)
    if (moved !== null && options.json !== true) printError(ctx, printable(postgresMovedNote(moved)));
    report(ctx, where, key, judged, options.json === true);
    return;
  }
  const file = fileArg !== undefined ? resolvePath(ctx.io, fileArg) : homePaths(home).audit;
  if (fileArg === undefined) refuseLinkedLog(file);
  // the home's log is missing: nothing was audited yet, unless its anchor or marker says otherwise (deleted or moved)
  const gone = fileArg === undefined && !existsSync(file);
  const marker = options.anchor === undefined && hasAnchoredMarker(file) ? anchoredMarkerPathOf(file) : null;
  if (gone && !existsSync(anchorPathOf(file)) && marker === null) throw noAuditLogYet(file);
  if (!gone) checkReadable(file, fileArg === undefined);
  const key = readPublicKey(ctx, options.publicKey, home);
  const anchorPath = options.anchor !== undefined ? resolvePath(ctx.io, options.anchor) : anchorPathOf(file);
  const anchor =
    options.anchor !== undefined || existsSync(anchorPath)
      ? readAnchorOrFail(anchorPath, options.anchor !== undefined)
      : undefined;
  const verifyOptions: VerifyAuditOptions = {
    ...(key.key === undefined ? {} : { publicKey: key.key }),
    ...(anchor === undefined ? {} : { anchor }),
  };
  /** The verification, failed `anchor_missing` when the log must have an anchor and has none. */
  const judged = (r: AuditVerification): AuditVerification => {
    if (anchor !== undefined) return r;
    const why = missingAnchorMessage(anchorPath, marker, fileArg === undefined, r);
    return why === null ? r : failForMissingAnchor(r, why);
  };
  if (gone) {
    // verified as an empty log: the anchor's checkpoint is missing from it (truncated_after_checkpoint), or
    // the anchor is gone too while the marker says there was one (anchor_missing)
    const where = { file, anchorPath, anchor, home, unterminatedLine: null, postgres: false, marker };
    report(ctx, where, key, judged(verifyAuditChain([], verifyOptions)), options.json === true);
    const what = anchor !== undefined ? "its anchor does" : `its marker \`${marker ?? ""}\` does`;
    if (options.json !== true)
      printError(ctx, `hint: \`${file}\` does not exist but ${what}: the log was deleted or moved`);
    return;
  }
  let verified;
  try {
    verified = await verifyAuditFile(file, verifyOptions);
  } catch (err) {
    throw cannotRead(file, "audit log", err);
  }
  const { verification, progress } = verified;
  const unterminatedLine = progress.unterminated ? progress.lines : null;
  const where = { file, anchorPath, anchor, home, unterminatedLine, postgres: false, marker };
  report(ctx, where, key, judged(verification), options.json === true);
}

/** Registers `acp audit verify [FILE]`. */
export function registerAuditVerify(parent: Command, ctx: CliContext): void {
  const command = parent
    .command("verify")
    .description("verify the audit chain, its checkpoints and their signatures; exit 3 naming the first bad line")
    .argument("[file]", "the audit log (default $ACP_HOME/audit.jsonl)")
    .option(
      "--public-key <file>",
      "hex Ed25519 public key checkpoints are signed with (default $ACP_HOME/keys/public.key)",
    )
    .option(
      "--anchor <file>",
      "the latest signed checkpoint kept beside the log (default FILE.checkpoint; with a storage URL, the home's audit-postgres-….checkpoint for that database)",
    )
    .option("--json", "print the verification as JSON (the verdict in `valid`, and in `ok` for old scripts)");
  storageUrlOption(command)
    .addHelpText(
      "after",
      [
        "",
        "Checks every line: §7.4 schema, canonical form, its own hash, the link to the line before, and each",
        "signed checkpoint; with the public key, also each consent event's signed consent_response against the",
        "metadata.consent_action recorded beside it; one that cannot be checked is named with its line and why",
        "(its action withheld as redacted, a value cut to fit the audit line, or an event older than the field).",
        "Reads the log line by line (rows page by page): memory stays small whatever the log's size. Without",
        "FILE, when a storage URL is set (--storage-url, ACP_STORAGE_URL or storage.url, as acp serve takes it),",
        "verifies the chain acp serve keeps in that PostgreSQL database instead of audit.jsonl, against this home's",
        "anchor for that database; where the home's record shows the URL now reaches another database than it",
        "last anchored through (a dump restored on a new server), against that database's anchor, and says so:",
        "a dump with its last rows cut fails, a faithful move verifies (acp serve --accept-moved-database after).",
        "",
        "After the first bad line the rest is still read, and what it tells is said (how many lines, how many",
        "link up, whether later checkpoints are signed with the key); the log is never called intact then.",
        "",
        "A log without its anchor (FILE.checkpoint) fails anchor_missing (exit 3) when it had one: its marker",
        "FILE.anchored is there (the writers make it with the first anchor), or it is the home's log and holds",
        "signed checkpoints. Deleting the anchor and cutting the log back is then caught; a FILE named without",
        "a marker beside it (a copy) is only warned about. With a storage URL the same holds for this home's",
        "anchor for that database: its marker audit-postgres-….anchored there and the anchor not is anchor_missing",
        "(acp serve writes the marker with its first anchor, and refuses to start there: audit_anchor_missing).",
        "",
        "Exit codes: 0 intact, 3 tampered or damaged (the first bad line and its problem, below; a bad anchor,",
        "or a missing one as above, too; the same with --json), 1 a file cannot be read (the log; a --public-key",
        "or --anchor named; the home's key or FILE.checkpoint when present, or owned by another user: `chown`",
        "it; the home's log a symbolic link, audit_log_unsafe, as the writers refuse it: name its target as",
        "FILE), or the storage URL (ACP_STORAGE_URL, storage.url) is not a postgres:// URL, PostgreSQL cannot",
        "be reached or holds no audit chain, 4 the public key file is not 64 hex digits, 2 usage (a --storage-url",
        "that is not a postgres:// URL).",
        "",
        "Problems:",
        ...AUDIT_PROBLEMS.map((p) => `  ${p.code.padEnd(27)} ${p.meaning}`),
        "",
        "Examples:",
        "  acp audit verify",
        "  cp ~/.acp/audit.jsonl ~/.acp/keys/public.key .   # a copy, e.g. kept on another machine",
        "  acp audit verify ./audit.jsonl --public-key ./public.key --json",
        "  ACP_STORAGE_URL=postgres://acp:…@db:5432/acp acp audit verify   # the chain of several acp serve nodes",
      ].join("\n"),
    )
    .action((file: string | undefined, options: VerifyOptions) => runVerify(ctx, file, options));
}
