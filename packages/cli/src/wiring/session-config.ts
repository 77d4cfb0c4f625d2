import { parseSessionSettings } from "@acp/core";
import { CliError, EXIT } from "../exit-codes.js";
import { whereIn, type ConfigFile } from "./config-file.js";

/**
 * Checks the `session:` block of the config file `file` and returns it; absent (undefined or null): `{}`.
 * Throws a CliError (exit 4) naming every bad key at `FILE:LINE:COL`.
 */
export function checkSessionBlock(file: ConfigFile): Record<string, unknown> {
  const block = file.values["session"];
  if (block === undefined || block === null) return {};
  if (typeof block !== "object" || Array.isArray(block)) {
    throw new CliError(
      `${whereIn(file, ["session"])}: \`session\` must be a mapping of session settings`,
      EXIT.invalid,
    );
  }
  const settings = block as Record<string, unknown>;
  if ("require_plan" in settings) {
    throw new CliError(
      `${whereIn(file, ["session", "require_plan"])}: remove \`session.require_plan\`: the proxy runs a plan only when the agent submits one (\`acp_submit_plan\`, with \`acp proxy --intent\`)`,
      EXIT.invalid,
    );
  }
  const parsed = parseSessionSettings({ ...settings, require_plan: false });
  if (!parsed.ok) {
    const lines = parsed.issues.map((i) => {
      const path = ["session", ...i.path.map(String)];
      return `${whereIn(file, path)}: \`${path.join(".")}\`: ${i.message.replace(/^session settings: /, "")}`;
    });
    throw new CliError(lines.join("\n"), EXIT.invalid);
  }
  return settings;
}
