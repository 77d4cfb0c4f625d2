import { isIP } from "node:net";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import {
  ClaimClient,
  ClaimClientError,
  createClaimServer,
  type AgentSandbox,
  type ClaimClientOptions,
  type ClaimServer,
  type FaqInput,
} from "@acp/claim";
import { printable } from "@acp/core";
import { openStateDb } from "@acp/store";
import { servesPlainHttpBeyondLoopback } from "@acp/proxy/http-rules";
import { printJson, printLine, resolveHome, resolvePath, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { readFailure } from "../decision/read-input.js";
import { storageOf } from "./storage-url.js";
import { admissionTokenOf, loadClaimConfig, openPostgres, providerKey } from "./claim-config.js";
import { registerClaimReputation } from "./claim-reputation.js";
import { registerClaimTakedown } from "./claim-takedown.js";
import { registerClaimIssuer } from "./claim-issuer.js";
import { checkPlainHttp } from "../wiring/plain-http.js";

/** Flags of `acp claim serve`. */
export interface ClaimServeFlags {
  port?: string;
  bind?: string;
  db?: string;
  storageUrl?: string;
  difficulty?: string;
  apiHost?: string;
  previewHost?: string;
  previewAdminHost?: string;
  adminHost?: string;
  pubSuffix?: string;
  tls?: boolean;
  insecurePlainHttp?: boolean;
  trustProxy?: string;
  config?: string;
  admission?: string;
  json?: boolean;
}

interface AgentFlags {
  provider?: string;
  file?: string;
  sandbox?: string;
  admissionToken?: string;
  insecureHttp?: boolean;
  json?: boolean;
}

const INSECURE_HELP =
  "allow a plain http:// provider that is not on this machine (agent tokens and claim codes cross the network unencrypted)";

/**
 * A client of the provider at `url`; a plain-http provider that is not this machine is a usage error unless
 * --insecure-http says so.
 */
function claimClient(url: string, flags: AgentFlags, options: ClaimClientOptions = {}): ClaimClient {
  try {
    return new ClaimClient(url, { ...options, ...(flags.insecureHttp === true ? { allowInsecureHttp: true } : {}) });
  } catch (err) {
    if (err instanceof ClaimClientError && err.code === "claim_insecure_provider")
      throw new CliError(printable(`${err.message}: --insecure-http`), EXIT.usage);
    throw err;
  }
}

const int = (v: string | undefined, name: string, fallback: number, min: number, max: number): number => {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new CliError(`--${name}: \`${v}\` is not an integer from ${min} to ${max}`, EXIT.usage);
  return n;
};

/** Starts the provider for `acp claim serve` (exported so tests can run it in-process); resolves once listening. */
export async function serveClaim(
  ctx: CliContext,
  flags: ClaimServeFlags,
): Promise<{ server: ClaimServer; port: number }> {
  const home = resolveHome(ctx.io);
  const port = int(flags.port, "port", 8080, 0, 65535);
  const difficulty = int(flags.difficulty, "difficulty", 20, 1, 28);
  const bind = flags.bind ?? "127.0.0.1";
  // before the database or the provider key is opened: agents' tokens, claim codes and cookies would be readable
  checkPlainHttp("claim serve", { bind, tls: flags.tls === true, insecurePlainHttp: flags.insecurePlainHttp === true });
  const dbPath = flags.db !== undefined ? resolvePath(ctx.io, flags.db) : join(home, "state.db");
  const hosts = {
    ...(flags.apiHost === undefined ? {} : { api: flags.apiHost }),
    ...(flags.previewHost === undefined ? {} : { preview: flags.previewHost }),
    ...(flags.previewAdminHost === undefined ? {} : { previewAdmin: flags.previewAdminHost }),
    ...(flags.adminHost === undefined ? {} : { admin: flags.adminHost }),
    ...(flags.pubSuffix === undefined ? {} : { pubSuffix: flags.pubSuffix }),
  };
  const trustedProxies = (flags.trustProxy ?? "").split(",").filter((a) => a.trim() !== "");
  for (const a of trustedProxies)
    if (isIP(a.trim()) === 0)
      throw new CliError(
        `--trust-proxy: \`${printable(a)}\` is not an IP address (give the proxy's addresses)`,
        EXIT.usage,
      );
  const admissionPolicy = loadClaimConfig(ctx, home, flags);
  const storage = storageOf(ctx, flags, home);
  if (storage !== null && flags.db !== undefined)
    throw new CliError(`--db and ${storage.source} both given: pick SQLite or PostgreSQL`, EXIT.usage);
  const backing =
    storage === null ? { db: openStateDb(dbPath) } : { postgres: await openPostgres(storage.url, storage.source) };
  const server = createClaimServer({
    ...backing,
    key: providerKey(home),
    hosts,
    tls: flags.tls === true,
    trustedProxies: trustedProxies.map((a) => a.trim()),
    admission: { baseDifficulty: difficulty, maxDifficulty: Math.max(difficulty, 28) },
    admissionPolicy,
    log: (entry) => void ctx.io.stderr.write(`${JSON.stringify(entry)}\n`),
  });
  let bound: number;
  try {
    bound = await server.listen(port, bind);
  } catch (err) {
    await server.close().catch(() => undefined);
    throw new CliError(
      `cannot listen on port ${port}: ${err instanceof Error ? err.message : String(err)}`,
      EXIT.error,
    );
  }
  if (servesPlainHttpBeyondLoopback({ bind, tls: flags.tls === true }))
    ctx.io.stderr.write(
      `acp claim: warning: serving on ${bind} without TLS: the agents' bearer tokens, claim codes, preview links ` +
        "and session cookies cross the network in clear text (--insecure-plain-http); put a TLS-terminating proxy " +
        "in front and give --tls\n",
    );
  return { server, port: bound };
}

const SANDBOX_ID = /^sbx_[A-Za-z0-9]{22}$/;

function sandboxPath(ctx: CliContext, id: string): string {
  if (!SANDBOX_ID.test(id)) throw new CliError(`\`${printable(id)}\` is not a sandbox id (sbx_…)`, EXIT.usage);
  return join(resolveHome(ctx.io), "claim", "sandboxes", `${id}.json`);
}

/** Saves a sandbox the provider made; an id that could not name the file is the provider's fault (exit 1). */
function saveSandbox(ctx: CliContext, s: AgentSandbox): void {
  if (!SANDBOX_ID.test(s.id))
    throw new CliError(
      `claim provider: sandbox id \`${printable(s.id)}\` is not sbx_ and 22 letters or digits; not saved`,
      EXIT.error,
    );
  const path = sandboxPath(ctx, s.id);
  mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(s, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/** A saved sandbox; an id that names none is invalid input (exit 4, as an unknown id is for `acp approve`). */
function loadSandbox(ctx: CliContext, id: string): AgentSandbox {
  const path = sandboxPath(ctx, id);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT")
      throw new CliError(`no saved sandbox \`${id}\` in \`${path}\``, EXIT.invalid);
    throw new CliError(`cannot read saved sandbox \`${path}\`: ${readFailure(err)}`, EXIT.error);
  }
  try {
    return JSON.parse(text) as AgentSandbox;
  } catch {
    throw new CliError(`saved sandbox \`${path}\` is not JSON`, EXIT.invalid);
  }
}

async function readFaq(ctx: CliContext, file: string | undefined): Promise<FaqInput> {
  if (file === undefined) throw new CliError("missing --file FAQ.json (or - for stdin)", EXIT.usage);
  let text: string;
  try {
    text = file === "-" ? await ctx.io.readStdin() : readFileSync(resolvePath(ctx.io, file), "utf8");
  } catch (err) {
    throw new CliError(`cannot read \`${file}\`: ${readFailure(err)}`, EXIT.error);
  }
  try {
    return JSON.parse(text) as FaqInput;
  } catch (err) {
    throw new CliError(`${file}: not JSON: ${err instanceof Error ? err.message : String(err)}`, EXIT.invalid);
  }
}

/**
 * The client's own refusals of a provider's answer (too large, too slow, a redirect, malformed, a proof-of-work
 * over the limit): the provider is broken or hostile, which is an error (exit 1), not a refusal by the provider.
 */
const CLIENT_REFUSALS: ReadonlySet<string> = new Set([
  "claim_response_too_large",
  "claim_response_invalid",
  "claim_redirect_refused",
  "claim_timeout",
  "claim_difficulty_refused",
]);

/**
 * Runs the agent's calls to the provider: its refusals are exit 3 (400: 4), the client's refusals of its answers
 * and other failures exit 1; a CliError thrown on the way (a usage error, an unknown saved sandbox, a bad token
 * file) keeps its own code. Every message is shown with its control characters escaped: much of it is the
 * provider's text.
 */
async function agent<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof CliError) throw err;
    if (err instanceof ClaimClientError)
      throw new CliError(
        printable(`claim provider: ${err.message} (${err.code})`),
        CLIENT_REFUSALS.has(err.code) ? EXIT.error : err.status === 400 ? EXIT.invalid : EXIT.refused,
      );
    throw new CliError(printable(`claim provider: ${err instanceof Error ? err.message : String(err)}`), EXIT.error);
  }
}

const client = (ctx: CliContext, flags: AgentFlags, fallback?: string): ClaimClient => {
  const url = flags.provider ?? fallback;
  if (url === undefined)
    throw new CliError(
      "missing --provider URL (the API origin, e.g. http://api.localhost:8080), or set ACP_CLAIM_PROVIDER",
      EXIT.usage,
    );
  const token = admissionTokenOf(ctx, flags.admissionToken);
  return claimClient(url, flags, token === undefined ? {} : { admissionToken: token });
};

const TOKEN_HELP =
  "admission token from an issuer the provider trusts (lowers the proof-of-work; needed by issuer-required providers); default: the token itself in $ACP_CLAIM_ADMISSION_TOKEN";

/** Registers `acp claim serve | create-faq | publish | link`. */
export function registerClaim(program: Command, ctx: CliContext): void {
  const claim = program
    .command("claim")
    .description("Agent Claim Protocol: run a provider, or build and hand off an FAQ as an agent");
  claim
    .command("serve")
    .description(
      "run the claim provider: API, preview, preview-admin, admin and published origins on one port, routed by Host",
    )
    .option("--port <port>", "port (default 8080)")
    .option("--bind <addr>", "address (default 127.0.0.1; beyond loopback needs --tls or --insecure-plain-http)")
    .option("--db <file>", "SQLite state database (default $ACP_HOME/state.db)")
    .option(
      "--storage-url <url>",
      "PostgreSQL instead of SQLite: postgres://user:pass@host:5432/db (default ACP_STORAGE_URL or storage.url in config.yml)",
    )
    .option("--difficulty <bits>", "base proof-of-work difficulty (default 20; adaptive up to 28)")
    .option("--api-host <name>", "API host name (default api.localhost)")
    .option("--preview-host <name>", "preview host name (default preview.localhost)")
    .option("--preview-admin-host <name>", "preview admin host name (default preview-admin.localhost)")
    .option("--admin-host <name>", "admin host name (default admin.localhost)")
    .option("--pub-suffix <name>", "published FAQs at {handle}.<name> (default pub.localhost)")
    .option("--tls", "behind TLS: https URLs, Secure __Host- cookies")
    .option(
      "--insecure-plain-http",
      "let --bind beyond loopback serve plain HTTP with no TLS in front: agents' tokens, claim codes and cookies " +
        "cross the network in clear text (only on a network you trust)",
    )
    .option(
      "--trust-proxy <addresses>",
      "comma-separated addresses of the reverse proxy in front: its requests are the client its X-Forwarded-For names",
    )
    .option(
      "--config <file>",
      "claim config: admission mode, trusted issuers, reputation (default $ACP_HOME/claim/config.yml)",
    )
    .option("--admission <mode>", "pow | pow+reputation (default) | issuer-required; overrides admission.mode")
    .option("--json", "once listening, print {bind, port, admission, api, claim_page} as one JSON line on stdout")
    .addHelpText(
      "after",
      `
Examples:
  acp claim serve --port 8080        # then open http://admin.localhost:8080/claim
  acp claim serve --port 0 --json    # a free port, named in the JSON line (scripts, tests)
  acp claim serve --port 443 --tls --api-host api.example.com --admin-host admin.example.com \\
    --preview-host preview.example.net --preview-admin-host preview-admin.example.net --pub-suffix faq.example.net

  ACP_STORAGE_URL=postgres://acp:…@db:5432/acp acp claim serve --port 8080   # state on PostgreSQL
  acp claim serve --admission issuer-required   # only agents with a token from an issuer in claim/config.yml

Admission (§11.2): adaptive proof-of-work always; with pow+reputation (default) a persistent per-range and
per-agent reputation (flagged content, lockouts, abandoned sandboxes; halves every 72 h) raises the difficulty
and eventually refuses a source for a while; trusted issuers' tokens (acp claim issuer keygen / issue) lower
the difficulty, or are required with issuer-required. Config file ($ACP_HOME/claim/config.yml or --config):
  admission: { mode: pow+reputation, issuers: [{ kid: …, public_key: …, name: … }], token_pow_discount_bits: 4 }
  reputation: { half_life_hours: 72, raise_at: 10, refuse_at: 160, points: { content_flagged: 30, lockout: 15, abandoned: 1 } }

State lives in SQLite ($ACP_HOME/state.db, or --db) unless a PostgreSQL URL is given by --storage-url, else
ACP_STORAGE_URL, else storage.url in config.yml (as acp serve); the claim tables are created on first start.
One JSON log line per request on stderr (request id, action, internal sandbox id, /24 range; never a secret).

Beyond loopback (--bind 0.0.0.0) it needs TLS in front of it, said with --tls: over plain HTTP the agents'
bearer tokens, claim codes, preview links and session cookies would cross the network in clear text, so it
does not start (exit 2, before the database or the key is opened) unless --insecure-plain-http accepts that;
it then warns at every start.

Exit codes: 0 stopped (SIGINT or SIGTERM), 1 cannot listen, open the database (SQLite or PostgreSQL), or
read the claim config or the provider key, 2 usage (a bad --port or --difficulty, --db with a PostgreSQL
URL, an unknown --admission, issuer-required without a trusted issuer, --bind beyond loopback without
--tls or --insecure-plain-http), 4 an invalid claim config (every
problem listed) or provider key.
Guide: acp docs guides/claim`,
    )
    .action(async (flags: ClaimServeFlags) => {
      const { server, port } = await serveClaim(ctx, flags);
      const bind = flags.bind ?? "127.0.0.1";
      // where this listener answers (plain HTTP: behind --tls the TLS terminator in front serves https)
      const api = `http://${flags.apiHost ?? "api.localhost"}:${port}`;
      const claimPage = `http://${flags.adminHost ?? "admin.localhost"}:${port}/claim`;
      ctx.io.stderr.write(
        `acp claim: listening on ${bind}:${port} (admission ${server.admissionMode}); API ${api}, claim page ${claimPage}\n`,
      );
      if (flags.json === true)
        ctx.io.stdout.write(
          `${JSON.stringify({ bind, port, admission: server.admissionMode, api, claim_page: claimPage })}\n`,
        );
      await new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      await server.close();
    });

  registerAgentCommands(claim, ctx);
  registerClaimIssuer(claim, ctx);
  registerClaimTakedown(claim, ctx);
  registerClaimReputation(claim, ctx);
}

function registerAgentCommands(claim: Command, ctx: CliContext): void {
  const env = ctx.io.env["ACP_CLAIM_PROVIDER"];
  claim
    .command("create-faq")
    .description(
      "as an agent: discovery → proof-of-work → sandbox → draft FAQ, and a single-use preview link for a human",
    )
    .option("--provider <url>", "API origin (default $ACP_CLAIM_PROVIDER)")
    .option("--file <faq.json>", "the FAQ (title, description, questions[{question, answer}]); - reads stdin")
    .option("--admission-token <file>", TOKEN_HELP)
    .option("--insecure-http", INSECURE_HELP)
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      `
Example:
  acp claim create-faq --provider http://api.localhost:8080 --file faq.json

Exit codes: 0 the draft and its preview link were made, 1 a file cannot be read, the sandbox cannot be
saved, or the provider cannot be reached or answers in a way the client refuses (over 1 MiB, not
in full within 30 s, a redirect, not the JSON the protocol says, a proof-of-work over 28 bits), 2 usage (no --file, no --provider, a plain http:// provider that is not this machine without --insecure-http), 3 the provider refused (the
uniform not_found, a limit or a refused source, admission tokens not accepted), 4 invalid input (--file
is not JSON, content the provider rejects with 400, an --admission-token file that is not a token).
`,
    )
    .action(async (flags: AgentFlags) => {
      const faq = await readFaq(ctx, flags.file);
      const c = client(ctx, flags, env);
      const r = await agent(async () => {
        const sandbox = await c.createSandbox();
        saveSandbox(ctx, sandbox);
        const faqId = await c.createFaq(sandbox, faq);
        const preview = await c.previewLink(sandbox);
        return {
          sandbox_id: sandbox.id,
          faq_id: faqId,
          preview_url: preview.exchange_url,
          preview_expires_at: preview.expires_at,
        };
      });
      if (flags.json === true) printJson(ctx, r);
      else
        printLine(
          ctx,
          `sandbox ${r.sandbox_id}: draft faq ${printable(r.faq_id)}\npreview (single use, until ${printable(r.preview_expires_at)}): ${printable(r.preview_url)}`,
        );
    });

  claim
    .command("publish")
    .description("as an agent: from discovery to a published FAQ in one call (or publish an FAQ of a saved sandbox)")
    .option("--provider <url>", "API origin (default $ACP_CLAIM_PROVIDER)")
    .option("--file <faq.json>", "the FAQ to create and publish; - reads stdin")
    .option("--sandbox <id>", "with --file: add to this saved sandbox instead of creating one")
    .option("--admission-token <file>", TOKEN_HELP)
    .option("--insecure-http", INSECURE_HELP)
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      `
Examples:
  acp claim publish --provider http://api.localhost:8080 --file faq.json
  acp claim link sbx_…   # then give the human the code and the page

Exit codes: 0 published, 1 a file cannot be read, the sandbox cannot be saved,
or the provider cannot be reached or answers in a way the client refuses (over 1 MiB, not
in full within 30 s, a redirect, not the JSON the protocol says, a proof-of-work over 28 bits), 2 usage (no --file, no --provider, plain http:// to another machine without --insecure-http, a --sandbox that is not a sandbox
id), 3 the provider refused (the uniform not_found, a limit or a refused source, admission tokens not
accepted), 4 invalid input (--file is not JSON, content the provider rejects with 400, an
--admission-token file that is not a token, no saved sandbox --sandbox).
`,
    )
    .action(async (flags: AgentFlags) => {
      const faq = await readFaq(ctx, flags.file);
      const r = await agent(async () => {
        if (flags.sandbox !== undefined) {
          const s = loadSandbox(ctx, flags.sandbox);
          const c = claimClient(flags.provider ?? s.api, flags);
          const faqId = await c.createFaq(s, faq);
          const p = await c.publish(s, faqId);
          return { sandbox_id: s.id, faq_id: faqId, published_url: p.published_url };
        }
        const p = await client(ctx, flags, env).publishFaq(faq);
        saveSandbox(ctx, p.sandbox);
        return { sandbox_id: p.sandbox.id, faq_id: p.faq_id, published_url: p.published_url };
      });
      if (flags.json === true) printJson(ctx, r);
      else
        printLine(
          ctx,
          `published: ${printable(r.published_url)}\nsandbox ${r.sandbox_id} (next: acp claim link ${r.sandbox_id})`,
        );
    });

  claim
    .command("link <sandbox-id>")
    .description("as an agent: a claim code (single use, ≤ 1 h) and the page where the human claims the sandbox")
    .option("--insecure-http", INSECURE_HELP)
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      `
Example:
  acp claim link sbx_4fQ… --json

Exit codes: 0 the claim code was printed, 1 a saved sandbox that cannot be read, or the provider
cannot be reached or answers in a way the client refuses (over 1 MiB, not
in full within 30 s, a redirect, not the JSON the protocol says, a proof-of-work over 28 bits), 2 not a sandbox id (sbx_…), or its provider is plain http:// on another machine and --insecure-http is not given, 3 the provider refused (nothing published yet, or the uniform
not_found), 4 no saved sandbox with that id, or the provider rejected the request (400).
`,
    )
    .action(async (id: string, flags: AgentFlags) => {
      const s = loadSandbox(ctx, id);
      const r = await agent(() => claimClient(s.api, flags).claimLink(s));
      if (flags.json === true) printJson(ctx, r);
      else
        printLine(
          ctx,
          `claim code: ${printable(r.claim_code)} (until ${printable(r.expires_at)})\nclaim page: ${printable(r.claim_url)}`,
        );
    });
}
