import { randomBytes } from "node:crypto";
import type { Command } from "commander";
import { sealConfigSecret, suggest } from "@acp/core";
import { AGENT_TOKEN_NAME } from "@acp/proxy/http-rules";
import { readConfigDocument, writeConfigValue } from "@acp/store";
import { printJson, printLine, resolveHome, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { openMasterSeed } from "../home-access/master-key.js";
import { orThrow } from "../home-access/or-throw.js";
import { readSecretValue } from "../home-access/secret-input.js";
import { checkBearerToken, webhookSecretProblem } from "../wiring/bearer-token.js";
import { SECRET_CONFIG_PATHS } from "../doctor/home-checks.js";

/**
 * The config keys that hold a bearer token (checked like `ACP_BRIDGE_TOKEN` before they are sealed), besides
 * every `serve.agent_tokens.NAME`, `serve.approver_tokens.NAME` and `proxy.agent_tokens.NAME`.
 */
const BEARER_TOKEN_PATHS = new Set(["serve.bearer_token", "serve.approver_token", "proxy.bearer_token"]);

/** The maps of NAME → sealed token or key, whose every entry is a secret (NAME as `AGENT_TOKEN_NAME`). */
const NAMED_TOKEN_MAPS = [
  "serve.agent_tokens",
  "serve.approver_tokens",
  "proxy.agent_tokens",
  "serve.trusted_channel_keys",
] as const;

/** The paths `set-secret` accepts, for messages and --help. */
const ACCEPTED = [...SECRET_CONFIG_PATHS, ...NAMED_TOKEN_MAPS.map((m) => `${m}.NAME`)].join(", ");

/**
 * Whether `path` is a key some command reads as a sealed secret: one of `SECRET_CONFIG_PATHS`, or NAME in
 * one of `NAMED_TOKEN_MAPS` (anything else — `version`, a typo, a new section — would be written silently).
 */
function isSecretPath(path: string): boolean {
  if ((SECRET_CONFIG_PATHS as readonly string[]).includes(path)) return true;
  return NAMED_TOKEN_MAPS.some((m) => path.startsWith(`${m}.`) && AGENT_TOKEN_NAME.test(path.slice(m.length + 1)));
}

/** The secret key a mistyped `path` most likely meant (`telegram.bot_tokn` → `telegram.bot_token`), if any. */
function closeSecretPath(path: string): string | undefined {
  const map = NAMED_TOKEN_MAPS.find((m) => path.startsWith(`${m}.`));
  if (map !== undefined) return undefined; // a bad NAME: the message says what a name is
  const dot = path.lastIndexOf(".");
  const prefix = dot === -1 ? "" : path.slice(0, dot + 1);
  // a mistyped map (`proxy.agent_token.ci_bot`) keeps its NAME
  const mapped = suggest(prefix.slice(0, -1), NAMED_TOKEN_MAPS);
  if (mapped !== undefined && AGENT_TOKEN_NAME.test(path.slice(dot + 1))) return `${mapped}.${path.slice(dot + 1)}`;
  return suggest(path, SECRET_CONFIG_PATHS);
}

/** Registers `acp config set-secret`. */
export function registerConfigSetSecret(parent: Command, ctx: CliContext): void {
  parent
    .command("set-secret")
    .description(
      "seal a secret into config.yml as encrypted:<base64> (value from stdin or a hidden prompt, never argv)",
    )
    .argument("<path>", `the secret's config key: ${ACCEPTED}`)
    .argument("[extra...]", "refused: a value on the command line would land in shell history and `ps`")
    .option("--json", "print the outcome as JSON")
    .addHelpText(
      "after",
      `
The value is sealed with AES-256-GCM under a key derived from the master key (HKDF-SHA256) and bound to
its path, then written into config.yml with every comment kept (atomic replace, mode 0600).

Only the keys that hold secrets are taken (anything else: exit 2, nothing written):
  ${SECRET_CONFIG_PATHS.join(", ")},
  ${NAMED_TOKEN_MAPS.map((m) => `${m}.NAME`).join(", ")}
  (NAME: lowercase letters, digits and _, at most 64, not starting with a digit).

Examples:
  printf %s "$BOT_TOKEN" | acp config set-secret telegram.bot_token
  acp config set-secret webhook.secret     # asks for the value without echo
  acp config set-secret proxy.agent_tokens.ci_bot

Exit codes: 0 written, 1 error (no passphrase, unreadable config), 2 usage (not a secret key, value in argv),
4 invalid value (a bearer token shorter than 16 characters or not sendable after "Bearer ", a webhook
secret or trusted-channel key shorter than 16 characters).`,
    )
    .action(async (path: string, extra: string[], options: { json?: boolean }) => {
      if (extra.length > 0) {
        throw new CliError(
          "`acp config set-secret` takes no value on the command line: pipe it on stdin or type it at the prompt",
          EXIT.usage,
        );
      }
      if (!isSecretPath(path)) {
        const shown = path.length > 64 ? `${path.slice(0, 64)}…` : path;
        const close = closeSecretPath(path);
        throw new CliError(
          `\`${shown}\` is not a key that holds a secret${close !== undefined ? ` (did you mean \`${close}\`?)` : ""}: ` +
            `set-secret takes ${ACCEPTED} (NAME: lowercase letters, digits and _); nothing was written`,
          EXIT.usage,
        );
      }
      const home = resolveHome(ctx.io);
      const doc = orThrow(readConfigDocument(home));
      const seed = await openMasterSeed(ctx, home);
      try {
        const value = await readSecretValue(ctx, `\`${path}\``);
        // a bearer token a service would refuse at start is refused now, before it is written
        if (BEARER_TOKEN_PATHS.has(path) || /^(serve\.(agent|approver)|proxy\.agent)_tokens\./.test(path)) {
          checkBearerToken(`\`${path}\``, value);
        }
        // an HMAC key (the webhook's, a trusted channel's) too short to resist guessing is refused now
        const hmacKey = path === "webhook.secret" || path.startsWith("serve.trusted_channel_keys.");
        const short = hmacKey ? webhookSecretProblem(`\`${path}\``, value) : null;
        if (short !== null) throw new CliError(short, EXIT.invalid);
        orThrow(writeConfigValue(home, doc, path, sealConfigSecret(value, path, seed, randomBytes)));
      } finally {
        seed.fill(0);
      }
      if (options.json === true) printJson(ctx, { path, sealed: true });
      else printLine(ctx, `sealed \`${path}\` in config.yml`);
    });
}
