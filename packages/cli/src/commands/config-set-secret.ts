import { randomBytes } from "node:crypto";
import type { Command } from "commander";
import { sealConfigSecret } from "@acp/core";
import { CONFIG_PATH_PATTERN, readConfigDocument, writeConfigValue } from "@acp/store";
import { printJson, printLine, resolveHome, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { openMasterSeed } from "../home-access/master-key.js";
import { orThrow } from "../home-access/or-throw.js";
import { readSecretValue } from "../home-access/secret-input.js";
import { checkBearerToken, webhookSecretProblem } from "../wiring/bearer-token.js";

/**
 * The config keys that hold a bearer token (checked like `ACP_BRIDGE_TOKEN` before they are sealed), besides
 * every `serve.agent_tokens.NAME`, `serve.approver_tokens.NAME` and `proxy.agent_tokens.NAME`.
 */
const BEARER_TOKEN_PATHS = new Set(["serve.bearer_token", "serve.approver_token", "proxy.bearer_token"]);

/** Registers `acp config set-secret`. */
export function registerConfigSetSecret(parent: Command, ctx: CliContext): void {
  parent
    .command("set-secret")
    .description(
      "seal a secret into config.yml as encrypted:<base64> (value from stdin or a hidden prompt, never argv)",
    )
    .argument("<path>", "the config key, e.g. telegram.bot_token or webhook.secret")
    .argument("[extra...]", "refused: a value on the command line would land in shell history and `ps`")
    .option("--json", "print the outcome as JSON")
    .addHelpText(
      "after",
      `
The value is sealed with AES-256-GCM under a key derived from the master key (HKDF-SHA256) and bound to
its path, then written into config.yml with every comment kept (atomic replace, mode 0600).

Examples:
  printf %s "$BOT_TOKEN" | acp config set-secret telegram.bot_token
  acp config set-secret webhook.secret     # asks for the value without echo

Exit codes: 0 written, 1 error (no passphrase, unreadable config), 2 usage (bad path, value in argv),
4 invalid value (a bearer token shorter than 16 characters or not sendable after "Bearer ", a webhook
secret shorter than 16 characters).`,
    )
    .action(async (path: string, extra: string[], options: { json?: boolean }) => {
      if (extra.length > 0) {
        throw new CliError(
          "`acp config set-secret` takes no value on the command line: pipe it on stdin or type it at the prompt",
          EXIT.usage,
        );
      }
      if (!CONFIG_PATH_PATTERN.test(path)) {
        throw new CliError(
          `\`${path.slice(0, 64)}\` is not a config key path (like \`telegram.bot_token\`)`,
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
        const short = path === "webhook.secret" ? webhookSecretProblem("`webhook.secret`", value) : null;
        if (short !== null) throw new CliError(short, EXIT.invalid);
        orThrow(writeConfigValue(home, doc, path, sealConfigSecret(value, path, seed, randomBytes)));
      } finally {
        seed.fill(0);
      }
      if (options.json === true) printJson(ctx, { path, sealed: true });
      else printLine(ctx, `sealed \`${path}\` in config.yml`);
    });
}
