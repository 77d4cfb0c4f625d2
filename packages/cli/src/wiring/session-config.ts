import { parseSessionSettings } from "@acp/core";
import { CliError, EXIT } from "../exit-codes.js";

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
