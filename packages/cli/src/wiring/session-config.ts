import { parseSessionSettings } from "@acp/core";
import { readConfigDocument } from "@acp/store";
import { CliError, EXIT } from "../exit-codes.js";

/**
 * The `session:` block of `$ACP_HOME/config.yml` (what `acp doctor` checks; `acp proxy` checks the block of
 * the config file in use with `checkSessionBlock`): the session runtime's settings (the same
 * form as `acp replay --session FILE`: `escalate_after_instructions`, `reads`, `provenance`, `directories`,
 * `transitions`, `kill_switch`, `trusted_servers`, `classify`, `off_plan`, `token_ttl_seconds`). No config
 * file or no block: `{}` (the runtime's defaults). A file or block that does not parse stops the proxy with
 * every issue named (exit 4): a typo in a protection must never silently run without it.
 *
 * `require_plan` is not taken from here: the proxy runs without a plan unless the agent submits one
 * (`acp_submit_plan` under `--intent`).
 */
export function loadSessionSettings(home: string): Record<string, unknown> {
  const doc = readConfigDocument(home);
  if (!doc.ok) {
    if (doc.issues[0]?.code === "config_missing") return {};
    throw new CliError(doc.issues.map((i) => i.message).join("; "), EXIT.invalid);
  }
  const config: unknown = doc.value.toJS({ maxAliasCount: 100 });
  const block = typeof config === "object" && config !== null ? (config as Record<string, unknown>)["session"] : null;
  return checkSessionBlock(block, "config.yml");
}

/**
 * Checks a `session:` block (`where` names its file in errors) and returns it; absent (undefined or null):
 * `{}`. Throws a CliError (exit 4) naming every bad key.
 */
export function checkSessionBlock(block: unknown, where: string): Record<string, unknown> {
  if (block === undefined || block === null) return {};
  if (typeof block !== "object" || Array.isArray(block)) {
    throw new CliError(`${where}: \`session\` must be a mapping of session settings`, EXIT.invalid);
  }
  const settings = block as Record<string, unknown>;
  if ("require_plan" in settings) {
    throw new CliError(
      `${where}: remove \`session.require_plan\`: the proxy runs a plan only when the agent submits one (\`acp_submit_plan\`, with \`acp proxy --intent\`)`,
      EXIT.invalid,
    );
  }
  const parsed = parseSessionSettings({ ...settings, require_plan: false });
  if (!parsed.ok) {
    const lines = parsed.issues.map((i) => {
      const key = ["session", ...i.path.map(String)].join(".");
      return `  ${key}: ${i.message.replace(/^session settings: /, "")}`;
    });
    throw new CliError(`${where}: invalid \`session\` settings:\n${lines.join("\n")}`, EXIT.invalid);
  }
  return settings;
}
