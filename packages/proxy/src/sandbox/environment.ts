/**
 * The agent's environment: ACP's own variables and anything holding an ACP secret are removed before the
 * agent starts (§2.3: credentials are never exposed in the agent's environment).
 */

/** Names removed whatever their value: ACP's own (`ACP_*`) and the proxy variables the sandbox sets itself. */
const REMOVED_NAMES = /^(ACP_.*|acp_.*|HTTPS?_PROXY|https?_proxy|ALL_PROXY|all_proxy|NO_PROXY|no_proxy)$/;

/** The shortest secret value looked for inside a variable's value (a shorter one is removed on an exact match). */
export const MIN_CONTAINED_SECRET = 6;

/** What else `scrubEnvironment` removes. */
export interface ScrubOptions {
  /**
   * Secret values ACP holds (vault entries, tokens): any variable whose value is one of them, or contains one of
   * at least `MIN_CONTAINED_SECRET` characters, is removed.
   */
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
 * the given names and without any variable whose value is one of `secretValues` (whatever its length: a
 * short vault entry, a PIN, passed in the environment as it is) or contains one of at least
 * `MIN_CONTAINED_SECRET` characters (a shorter one is too likely to turn up inside an unrelated value).
 */
export function scrubEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  options: ScrubOptions = {},
): ScrubbedEnvironment {
  const names = new Set(options.names ?? []);
  const exact = new Set((options.secretValues ?? []).filter((s) => s.length > 0));
  const contained = [...exact].filter((s) => s.length >= MIN_CONTAINED_SECRET);
  const out: Record<string, string> = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (REMOVED_NAMES.test(name) || names.has(name) || exact.has(value) || contained.some((s) => value.includes(s))) {
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
