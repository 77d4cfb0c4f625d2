import { createPublicKey } from "node:crypto";
import type { Command } from "commander";
import {
  checkConsentProof,
  publicKeyToHex,
  verifyConsentProof,
  type ProofVerification,
  type VerifyProofOptions,
  printable,
} from "@acp/core";
import { createSqliteNonceStore, homePaths, openStateDb, readFileUpTo, readPublicKeyHex } from "@acp/store";
import { printJson, printLine, resolveHome, resolvePath, type CliContext } from "../context.js";
import { readFailure } from "../decision/read-input.js";
import { CliError, EXIT } from "../exit-codes.js";
import { orThrow } from "../home-access/or-throw.js";

interface ProofVerifyOptions {
  readonly request?: string;
  readonly publicKey?: string;
  readonly consume?: boolean;
  readonly json?: boolean;
}

/** Largest proof, request or key file read (1 MiB); a larger one, `/dev/zero` or an endless pipe is not read on. */
const MAX_INPUT_BYTES = 1024 * 1024;

function readInput(ctx: CliContext, file: string, what: string): string {
  const path = resolvePath(ctx.io, file);
  let buf: Buffer | undefined;
  try {
    buf = readFileUpTo(path, MAX_INPUT_BYTES);
  } catch (err) {
    const hint = what === "public key" ? " (give 64 lowercase hex digits, or a file holding them or a PEM key)" : "";
    throw new CliError(`cannot read ${what} \`${file}\`: ${readFailure(err)}${hint}`, EXIT.error);
  }
  if (buf === undefined) throw new CliError(`\`${file}\` is larger than 1 MiB`, EXIT.refused);
  return buf.toString("utf8");
}

/** The trusted key: `--public-key` (a file holding hex or PEM, or the hex itself), else the home's key. */
function trustedKey(ctx: CliContext, option: string | undefined): string {
  if (option === undefined) return orThrow(readPublicKeyHex(resolveHome(ctx.io)));
  if (/^[0-9a-fA-F]{64}$/.test(option) && !/^[0-9a-f]{64}$/.test(option))
    throw new CliError(`--public-key: \`${option}\` has upper-case hex digits; give the key in lower case`, EXIT.usage);
  const text = /^[0-9a-f]{64}$/.test(option) ? option : readInput(ctx, option, "public key").trim();
  if (/^[0-9a-f]{64}$/.test(text)) return text;
  try {
    const key = createPublicKey(text);
    if (key.asymmetricKeyType === "ed25519") return publicKeyToHex(key);
  } catch {
    // fall through to the error below
  }
  throw new CliError(`\`${option}\` is not an ed25519 public key (64 lowercase hex digits or PEM)`, EXIT.usage);
}

/** Thrown inside this command when an input is not JSON; reported as `malformed` (exit 3). */
class NotJson extends Error {}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new NotJson(`\`${what}\` is not json`);
  }
}

/** Splits the input into response and request: a bundle `{request, response}`, or a response and `--request`. */
function readProof(
  ctx: CliContext,
  file: string,
  requestFile: string | undefined,
): { response: unknown; request: unknown } {
  const value = parseJson(readInput(ctx, file, "proof"), file);
  const isBundle =
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    Object.keys(value).sort().join(",") === "request,response";
  if (isBundle) {
    if (requestFile !== undefined) throw new CliError("the file already holds the request; drop --request", EXIT.usage);
    const bundle = value as { request: unknown; response: unknown };
    return bundle;
  }
  if (requestFile === undefined) {
    throw new CliError(
      'a proof is bound to its request: give --request FILE, or a file holding {"request", "response"}',
      EXIT.usage,
    );
  }
  return { response: value, request: parseJson(readInput(ctx, requestFile, "request"), requestFile) };
}

async function verify(
  home: string,
  options: VerifyProofOptions,
  consume: boolean,
  response: unknown,
): Promise<ProofVerification> {
  if (!consume) return checkConsentProof(response, options);
  const db = openStateDb(homePaths(home).stateDb);
  try {
    return await verifyConsentProof(response, { ...options, nonceStore: createSqliteNonceStore(db) });
  } finally {
    db.close();
  }
}

function report(ctx: CliContext, v: ProofVerification, json: boolean): void {
  if (json) {
    if (v.ok) {
      const r = v.value.response;
      printJson(ctx, {
        valid: true,
        decision: r.decision,
        approved: v.value.approved,
        request_id: r.request_id,
        approver: r.approver,
        approver_signed: false,
        valid_until: r.conditions.valid_until,
        action: { server: v.value.action.server, tool: v.value.action.tool },
      });
    } else printJson(ctx, { valid: false, reason: v.reason, issues: v.issues });
    return;
  }
  // `approver.id` is not signed, and the tool, the server and the messages (unknown field names) come from
  // the files: no control character of theirs reaches the terminal
  if (v.ok) {
    const r = v.value.response;
    printLine(
      ctx,
      printable(
        `valid: ${r.decision} \`${v.value.action.tool}\` on \`${v.value.action.server}\` (request ${r.request_id}, valid until ${r.conditions.valid_until}); approver, as the response states it (not signed): ${r.approver.id} via ${r.approver.channel}`,
      ),
    );
  } else {
    printLine(ctx, printable(`invalid: ${v.reason}: ${v.issues.map((i) => i.message).join("; ")}`));
  }
}

/** Registers `acp proof verify`. */
export function registerProofVerify(parent: Command, ctx: CliContext): void {
  parent
    .command("verify")
    .description(
      "verify a signed consent response (§6.3): key, payload hash, Ed25519 signature, nonce, exact action, expiry",
    )
    .argument("<file>", 'a JSON file: {"request": …, "response": …}, or a consent_response with --request')
    .option("--request <file>", "the consent_request the response answers")
    .option("--public-key <file-or-hex>", "the trusted public key (hex or PEM); default $ACP_HOME/keys/public.key")
    .option("--consume", "also spend the nonce in $ACP_HOME/state.db (a second run reports `replayed`)")
    .option("--json", "print the outcome as JSON")
    .addHelpText(
      "after",
      `
Expiry is checked against the current time. Reasons for refusal: malformed, wrong_key, payload_mismatch,
bad_signature, nonce_mismatch, action_mismatch, expired, replayed. See acp docs reference/consent-proof.

Examples:
  acp proof verify approval.json
  acp proof verify response.json --request request.json --public-key approver.pub
  acp proof verify approval.json --consume --json

Exit codes: 0 valid, 3 invalid (the reason is printed), 1 error (unreadable file), 2 usage.`,
    )
    .action(async (file: string, options: ProofVerifyOptions) => {
      const home = resolveHome(ctx.io);
      const trusted = trustedKey(ctx, options.publicKey);
      let proof: { response: unknown; request: unknown };
      try {
        proof = readProof(ctx, file, options.request);
      } catch (err) {
        if (!(err instanceof NotJson)) throw err;
        const issue = { code: "proof_malformed", path: [], message: err.message };
        report(ctx, { ok: false, reason: "malformed", issues: [issue] }, options.json === true);
        ctx.exitCode = EXIT.refused;
        return;
      }
      const { response, request } = proof;
      const verifyOptions: VerifyProofOptions = { request, trustedPublicKey: trusted, now: ctx.io.now() };
      const v = await verify(home, verifyOptions, options.consume === true, response);
      report(ctx, v, options.json === true);
      ctx.exitCode = v.ok ? EXIT.ok : EXIT.refused;
    });
}
