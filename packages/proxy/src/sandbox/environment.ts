/**
 * The agent's environment: ACP's own variables and anything holding an ACP secret are removed before the
 * agent starts (§2.3: credentials are never exposed in the agent's environment).
 */

/** Names removed whatever their value: ACP's own (`ACP_*`) and the proxy variables the sandbox sets itself. */
const REMOVED_NAMES = /^(ACP_.*|acp_.*|HTTPS?_PROXY|https?_proxy|ALL_PROXY|all_proxy|NO_PROXY|no_proxy)$/;

/** What else `scrubEnvironment` removes. */
export interface ScrubOptions {
  /** Secret values ACP holds (vault entries, tokens): any variable containing one of them is removed. */
  readonly secretValues?: readonly string[];
  /** Further variable names to remove. */
  readonly names?: readonly string[];
}

/** The scrubbed environment and the names that were removed (names only, never values). */
export interface ScrubbedEnvironment {
  readonly env: Record<string, string>;
  readonly removed: readonly string[];
}

/**
 * Returns a copy of `env` without `ACP_*`, without the proxy variables (the sandbox sets its own), without
 * the given names and without any variable whose value contains one of `secretValues` (values shorter than
 * 6 characters are ignored: too short to be a secret and too likely to match by chance).
 */
export function scrubEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  options: ScrubOptions = {},
): ScrubbedEnvironment {
  const names = new Set(options.names ?? []);
  const secrets = (options.secretValues ?? []).filter((s) => s.length >= 6);
  const out: Record<string, string> = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (REMOVED_NAMES.test(name) || names.has(name) || secrets.some((s) => value.includes(s))) {
      removed.push(name);
      continue;
    }
    out[name] = value;
  }
  return { env: out, removed: removed.sort() };
}

/** The variables the sandbox gives the agent: where ACP's MCP endpoint and the egress proxy are. */
export function sandboxVariables(endpoints: {
  readonly mcpUrl: string;
  readonly egressUrl: string;
  readonly isolation: string;
}): Record<string, string> {
  return {
    ACP_MCP_URL: endpoints.mcpUrl,
    ACP_SANDBOX: endpoints.isolation,
    HTTPS_PROXY: endpoints.egressUrl,
    HTTP_PROXY: endpoints.egressUrl,
    https_proxy: endpoints.egressUrl,
    http_proxy: endpoints.egressUrl,
    NO_PROXY: "localhost,127.0.0.1,::1",
    no_proxy: "localhost,127.0.0.1,::1",
  };
}
