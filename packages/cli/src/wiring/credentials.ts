import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { compileGlob, injectCredentials, type CredentialInjection, type GlobMatcher } from "@acp/core";
import { readVault } from "@acp/store";
import type { CredentialHook } from "@acp/proxy";
import { CliError, EXIT } from "../exit-codes.js";

/** One `credentials:` entry of config.yml: which vault entry goes into which argument of which tools. */
interface CredentialRule {
  readonly secret: string;
  readonly server: GlobMatcher;
  readonly tool: GlobMatcher;
  readonly argument: string;
}

const KEYS = ["secret", "server", "tool", "argument"];

function glob(value: unknown, where: string): GlobMatcher {
  if (typeof value !== "string") throw new CliError(`${where}: must be a glob string`, EXIT.invalid);
  const compiled = compileGlob(value);
  if (!compiled.ok) throw new CliError(`${where}: ${compiled.issues[0]?.message ?? "invalid glob"}`, EXIT.invalid);
  return compiled.value;
}

/** Reads `credentials:` from `$ACP_HOME/config.yml`; invalid → exit 4 naming the entry. */
export function loadCredentialRules(home: string): CredentialRule[] {
  const file = join(home, "config.yml");
  if (!existsSync(file)) return [];
  const config = parseYaml(readFileSync(file, "utf8"), { maxAliasCount: 100 }) as { credentials?: unknown } | null;
  const list = config?.credentials;
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new CliError(`${file}: \`credentials\` must be a list`, EXIT.invalid);
  return list.map((entry: unknown, i) => {
    const where = `${file}: credentials.${i}`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry))
      throw new CliError(`${where}: must be a mapping`, EXIT.invalid);
    const e = entry as Record<string, unknown>;
    for (const key of Object.keys(e)) {
      if (!KEYS.includes(key))
        throw new CliError(`${where}: unknown key \`${key}\` (expected ${KEYS.join(", ")})`, EXIT.invalid);
    }
    if (typeof e["secret"] !== "string" || typeof e["argument"] !== "string" || e["argument"] === "") {
      throw new CliError(`${where}: needs \`secret\` (a vault entry name) and \`argument\``, EXIT.invalid);
    }
    return {
      secret: e["secret"],
      argument: e["argument"],
      server: glob(e["server"] ?? "*", `${where}.server`),
      tool: glob(e["tool"], `${where}.tool`),
    };
  });
}

/**
 * The proxy's credential hook: for an accepted call, the vault entries that config.yml names for its
 * server and tool go into their arguments — only for that call, opened with the home's key on first use.
 */
export function createCredentialHook(options: {
  readonly home: string;
  readonly rules: readonly CredentialRule[];
  readonly seed: () => Promise<Uint8Array>;
}): CredentialHook | undefined {
  if (options.rules.length === 0) return undefined;
  let vault: Promise<Readonly<Record<string, string>>> | undefined;
  let known: readonly string[] = [];
  const open = (): Promise<Readonly<Record<string, string>>> =>
    (vault ??= options.seed().then((seed) => {
      const entries = readVault(options.home, seed);
      if (!entries.ok) throw new Error(entries.issues[0]?.message ?? "cannot open the vault");
      known = options.rules.map((r) => entries.value[r.secret]).filter((v): v is string => typeof v === "string");
      return entries.value;
    }));
  return {
    async inject(server, tool, args) {
      const injections: CredentialInjection[] = options.rules
        .filter((r) => r.server(server) && r.tool(tool))
        .map((r) => ({ secret: r.secret, target: { kind: "argument", name: r.argument } }));
      if (injections.length === 0) return { arguments: args, injected: [] };
      const result = injectCredentials(args, injections, await open());
      if (!result.ok) throw new Error(result.issues.map((i) => i.message).join("; "));
      return { arguments: { ...result.value.arguments }, injected: result.value.injected };
    },
    secretValues: () => known,
  };
}
