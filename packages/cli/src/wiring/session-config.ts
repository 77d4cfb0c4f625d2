import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { parseSessionSettings } from "@acp/core";
import { CliError, EXIT } from "../exit-codes.js";

/**
 * The `session:` block of `$ACP_HOME/config.yml`: the session runtime's settings for `acp proxy` (the same
 * form as `acp replay --session FILE`: `escalate_after_instructions`, `reads`, `provenance`, `directories`,
 * `transitions`, `kill_switch`, `trusted_servers`, `classify`, `off_plan`, `token_ttl_seconds`). Absent
 * block: `{}` (the runtime's defaults). A block that does not parse stops the proxy with every issue named
 * (exit 4): a typo in a protection must never silently run without it.
 *
 * `require_plan` is not taken from here: the proxy runs without a plan unless the agent submits one
 * (`acp_submit_plan` under `--intent`).
 */
export function loadSessionSettings(home: string): Record<string, unknown> {
  const file = join(home, "config.yml");
  if (!existsSync(file)) return {};
  let config: unknown;
  try {
    config = parseYaml(readFileSync(file, "utf8"), { maxAliasCount: 100 });
  } catch (err) {
    throw new CliError(`${file}: not valid YAML: ${err instanceof Error ? err.message : String(err)}`, EXIT.invalid);
  }
  const block = typeof config === "object" && config !== null ? (config as Record<string, unknown>)["session"] : null;
  if (block === undefined || block === null) return {};
  if (typeof block !== "object" || Array.isArray(block)) {
    throw new CliError(`${file}: \`session\` must be a mapping of session settings`, EXIT.invalid);
  }
  const settings = block as Record<string, unknown>;
  if ("require_plan" in settings) {
    throw new CliError(
      `${file}: session.require_plan is not set in config.yml (the proxy runs a plan when the agent submits one with --intent)`,
      EXIT.invalid,
    );
  }
  const parsed = parseSessionSettings({ ...settings, require_plan: false });
  if (!parsed.ok) {
    const lines = parsed.issues.map((i) => {
      const where = ["session", ...i.path.map(String)].join(".");
      return `  ${where}: ${i.message.replace(/^session settings: /, "")}`;
    });
    throw new CliError(`${file}: invalid \`session\` settings:\n${lines.join("\n")}`, EXIT.invalid);
  }
  return settings;
}
