/**
 * What an upstream's tool annotations count for. MCP: "clients MUST consider tool annotations to be
 * untrusted unless they come from trusted servers". The decision core lets annotations tighten the name
 * table and decide for a name it does not know; from a server not marked `trusted: true` they may only
 * tighten: its `readOnlyHint: true` is set aside, so a tool that merely says it reads stays what its name
 * makes it (an unknown name: write/medium) instead of riding a rule written for reads. `destructiveHint`
 * (and `readOnlyHint: false`) still count: they can only make a decision stricter.
 */
import { classifyDerived, type ClassificationOverride, type ToolAnnotations } from "@acp/core";

const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;

/** The hints (booleans) of a listed tool's `annotations` that a call to it is decided with. */
export function annotationsToDecideWith(value: unknown, trustedServer: boolean): ToolAnnotations | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const out: { -readonly [K in keyof ToolAnnotations]: boolean } = {};
  for (const key of HINTS) {
    if (typeof v[key] === "boolean") out[key] = v[key];
  }
  if (!trustedServer && out.readOnlyHint === true) delete out.readOnlyHint;
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The tools of a server not marked trusted whose `readOnlyHint: true` is set aside and changes something:
 * tools a call to which is still not classified a read without it, as the decision classifies it (the
 * policy's `classify:` entries, the annotations it is decided with, the built-in table): a name the table or
 * `classify` makes a read is one already. Said once at start, so a person sees why `echo` asks and how to
 * change it.
 */
export function readOnlyClaimsSetAside(
  server: string,
  tools: readonly { readonly name: string; readonly annotations?: unknown }[],
  classify: readonly ClassificationOverride[] = [],
): string[] {
  const names: string[] = [];
  for (const tool of tools) {
    const annotations = tool.annotations;
    if (typeof annotations !== "object" || annotations === null) continue;
    if ((annotations as Record<string, unknown>)["readOnlyHint"] !== true) continue;
    const decideWith = annotationsToDecideWith(annotations, false);
    const request = {
      server,
      tool: tool.name,
      arguments: {},
      ...(decideWith !== undefined ? { annotations: decideWith } : {}),
    };
    if (classifyDerived(request, classify).category === "read") continue;
    names.push(tool.name);
  }
  return names;
}

/**
 * The line the proxy logs once for an upstream not marked trusted whose tools' `readOnlyHint: true` is set
 * aside (`readOnlyClaimsSetAside`): which tools, and how to have them taken as reads. `null` when none is.
 */
export function readOnlySetAsideMessage(
  server: string,
  tools: readonly { readonly name: string; readonly annotations?: unknown }[],
  classify: readonly ClassificationOverride[] = [],
): string | null {
  const names = readOnlyClaimsSetAside(server, tools, classify);
  if (names.length === 0) return null;
  const shown =
    names
      .slice(0, 5)
      .map((n) => `\`${n}\``)
      .join(", ") + (names.length > 5 ? `, and ${names.length - 5} more` : "");
  return (
    `upstream \`${server}\`: ${names.length === 1 ? "1 tool marks itself" : `${names.length} tools mark themselves`} read-only (${shown}); ` +
    "not taken as reads, since the server is not marked `trusted: true`: judged by name (an unknown name as a write), " +
    "so the policy's write rules apply. To take them as reads, mark the server `trusted: true` in config.yml " +
    `(proxy.upstream_servers) or start acp proxy with --trust ${server}, or name them in policy.yml's \`classify:\``
  );
}
