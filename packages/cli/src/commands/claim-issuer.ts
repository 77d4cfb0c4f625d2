import { randomBytes, type JsonWebKey } from "node:crypto";
import { chmodSync, existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { FileTooOpenError, OWNER_ONLY, readFileUpTo, tooOpenMessage } from "@acp/store";
import { issuerKeyOf, MAX_TOKEN_USES, newIssuerKey, signAdmissionToken, type IssuerKey } from "@acp/claim";
import { printJson, printLine, resolveHome, resolvePath, type CliContext } from "../context.js";
import { readFailure } from "../decision/read-input.js";
import { writeOutputFileSync } from "../decision/write-output.js";
import { CliError, EXIT } from "../exit-codes.js";

interface KeygenFlags {
  out?: string;
  force?: boolean;
  json?: boolean;
}

interface IssueFlags {
  key?: string;
  subject?: string;
  audience?: string;
  ttl?: string;
  uses?: string;
  out?: string;
  json?: boolean;
}

const keyPath = (ctx: CliContext, flag: string | undefined): string =>
  flag !== undefined ? resolvePath(ctx.io, flag) : join(resolveHome(ctx.io), "claim", "issuer.key");

function writeSecret(path: string, text: string): void {
  writeOutputFileSync(path, text, { mode: 0o600, makeDirectories: true });
  chmodSync(path, 0o600);
}

function readIssuerKey(path: string): IssuerKey {
  let text: string;
  try {
    // A private key: a regular file, closed to group and others (as ssh refuses such a key), at most 4 KB.
    text = readFileUpTo(path, 4096, { regularOnly: true, refuseMode: OWNER_ONLY })?.toString("utf8") ?? "";
  } catch (err) {
    if (err instanceof FileTooOpenError)
      throw new CliError(tooOpenMessage(err, "whoever can read it can issue admission tokens"), EXIT.error);
    throw new CliError(
      `cannot read the issuer key \`${path}\`: ${readFailure(err)} (create one with acp claim issuer keygen)`,
      EXIT.error,
    );
  }
  try {
    return issuerKeyOf(JSON.parse(text) as JsonWebKey);
  } catch (err) {
    throw new CliError(`\`${path}\`: ${err instanceof Error ? err.message : String(err)}`, EXIT.invalid);
  }
}

/** `30m`, `12h`, `7d` or seconds → milliseconds (1 s to 366 d). */
function parseTtl(v: string): number {
  const m = /^(\d+)(s|m|h|d)?$/.exec(v);
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m?.[2] ?? "s"] ?? 1000;
  const ms = m === null ? NaN : Number(m[1]) * unit;
  if (!Number.isFinite(ms) || ms < 1000 || ms > 366 * 86_400_000)
    throw new CliError(`--ttl: \`${v}\` is not a duration from 1s to 366d (e.g. 30m, 12h, 7d)`, EXIT.usage);
  return ms;
}

/** The config lines an operator pastes under `admission.issuers` of the provider's claim config. */
const configSnippet = (k: IssuerKey): string =>
  `admission:\n  issuers:\n    - kid: ${k.kid}\n      public_key: ${k.publicKey}\n      name: my issuer`;

/** Registers `acp claim issuer keygen | issue`: run an issuer of admission tokens (§11.2). */
export function registerClaimIssuer(claim: Command, ctx: CliContext): void {
  const issuer = claim
    .command("issuer")
    .description("run an issuer of admission tokens that claim providers trust beside proof-of-work");

  issuer
    .command("keygen")
    .description("create an Ed25519 issuer key; prints its kid and public key for the provider's claim config")
    .option("--out <file>", "where the private key goes (default $ACP_HOME/claim/issuer.key, mode 0600)")
    .option("--force", "replace an existing key (tokens it signed stop verifying once providers drop the old key)")
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      `
Example:
  acp claim issuer keygen            # then add the printed lines to the provider's $ACP_HOME/claim/config.yml

Exit codes: 0 written, 1 the key cannot be written, 2 usage (the key file exists and --force was not
given, an unknown option).
`,
    )
    .action((flags: KeygenFlags) => {
      const path = keyPath(ctx, flags.out);
      if (existsSync(path) && flags.force !== true)
        throw new CliError(`\`${path}\` already exists (use --force to replace it)`, EXIT.usage);
      const k = newIssuerKey();
      writeSecret(path, `${JSON.stringify(k.privateJwk)}\n`);
      if (flags.json === true) printJson(ctx, { kid: k.kid, public_key: k.publicKey, key_file: path });
      else
        printLine(
          ctx,
          `issuer key: ${path} (0600; keep it secret)\nkid: ${k.kid}\npublic key: ${k.publicKey}\n\nprovider claim config:\n${configSnippet(k)}`,
        );
    });

  issuer
    .command("issue")
    .description("sign an admission token for one agent (subject) and one provider (audience)")
    .option("--subject <id>", "the agent the token admits (1–200 printable characters)")
    .option("--audience <url>", "the provider's API origin, as its discovery lists it (e.g. https://api.example.com)")
    .option("--ttl <duration>", "validity: 30m, 12h, 7d … (default 1h; providers refuse more than 30d by default)")
    .option("--uses <n>", `sandbox creations it admits (default 1; at most ${MAX_TOKEN_USES})`)
    .option("--key <file>", "issuer key (default $ACP_HOME/claim/issuer.key)")
    .option("--out <file>", "write the token to this file (0600) instead of stdout")
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      `
Examples:
  acp claim issuer keygen            # once: the issuer key the tokens are signed with
  acp claim issuer issue --subject agent-42 --audience http://api.localhost:8080 --out agent-42.token
  acp claim publish --provider http://api.localhost:8080 --file faq.json --admission-token agent-42.token

Exit codes: 0 signed, 1 the issuer key cannot be read (none yet: acp claim issuer keygen) or --out cannot
be written, 2 usage (a bad --subject, --audience, --ttl or --uses), 4 the key file is not an issuer key.
`,
    )
    .action((flags: IssueFlags) => {
      if (flags.subject === undefined || !/^[\x21-\x7e]{1,200}$/.test(flags.subject))
        throw new CliError("--subject: give the agent id (1–200 printable characters, no spaces)", EXIT.usage);
      if (flags.audience === undefined || !/^https?:\/\/[^\s/]+$/.test(flags.audience))
        throw new CliError(
          "--audience: give the provider's API origin (scheme://host[:port], no path), e.g. http://api.localhost:8080",
          EXIT.usage,
        );
      const uses = flags.uses === undefined ? 1 : Number(flags.uses);
      if (!Number.isInteger(uses) || uses < 1 || uses > MAX_TOKEN_USES)
        throw new CliError(`--uses: \`${flags.uses}\` is not an integer from 1 to ${MAX_TOKEN_USES}`, EXIT.usage);
      const ttlMs = parseTtl(flags.ttl ?? "1h");
      const key = readIssuerKey(keyPath(ctx, flags.key));
      const nowMs = ctx.io.now().getTime();
      const jti = randomBytes(16).toString("hex");
      const token = signAdmissionToken(key, {
        subject: flags.subject,
        audience: flags.audience,
        nowMs,
        ttlMs,
        jti,
        maxUses: uses,
      });
      const expires = new Date(Math.floor(nowMs / 1000) * 1000 + Math.max(1000, Math.floor(ttlMs / 1000) * 1000));
      if (flags.out !== undefined) writeSecret(resolvePath(ctx.io, flags.out), `${token}\n`);
      const facts = { kid: key.kid, subject: flags.subject, audience: flags.audience, expires_at: expires, uses, jti };
      if (flags.json === true)
        printJson(ctx, { ...facts, ...(flags.out === undefined ? { token } : { token_file: flags.out }) });
      else if (flags.out === undefined) printLine(ctx, token);
      else
        printLine(
          ctx,
          `admission token for ${flags.subject} → ${flags.out} (0600; ${uses} use${uses === 1 ? "" : "s"}, until ${expires.toISOString()})`,
        );
    });
}
