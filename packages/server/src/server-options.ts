/**
 * The checks of `createAcpServer`'s inputs that need no store: the required any-server pipelines, the
 * public URL, the named tokens, the agents' servers and the TLS key and certificate. `openEmbeddedServer` runs them before it opens a
 * store, so a misconfigured caller is told what is wrong with its inputs (not what the audit log or state
 * database made of a half-open home) and no file is created for a service that cannot start.
 */
import { createSecureContext } from "node:tls";
import { AGENT_TOKEN_NAME, parsePublicUrl, type PublicUrl } from "@acp/proxy";
import { compileGlob } from "@acp/core";
import type { ServerScopes } from "./service/service-errors.js";

/** The inputs the checks read (a subset of `AcpServerOptions`; the pipelines may be functions). */
export interface CheckedServerInputs {
  readonly anyServerPipeline?: unknown;
  readonly anyServerRecheckPipeline?: unknown;
  readonly publicUrl?: string;
  readonly token?: string;
  readonly approverToken?: string;
  readonly agentTokens?: Readonly<Record<string, string>>;
  readonly approverTokens?: Readonly<Record<string, string>>;
  readonly agentServers?: Readonly<Record<string, readonly string[]>>;
  readonly tls?: { readonly key: string | Buffer; readonly cert: string | Buffer };
}

/** What the checks produce, ready for the service. */
export interface CheckedServerOptions {
  readonly publicUrl?: PublicUrl;
  readonly agentTokens: ReadonlyMap<string, string>;
  readonly approverTokens: ReadonlyMap<string, string>;
  readonly serverScopes: ServerScopes;
}

/** Throws unless every named agent or approver token has a valid name and differs from every other token. */
function checkNamedTokens(maps: readonly ReadonlyMap<string, string>[], token?: string, approverToken?: string): void {
  const seen = new Set([token, approverToken].filter((t) => t !== undefined));
  for (const [name, value] of maps.flatMap((m) => [...m])) {
    if (!AGENT_TOKEN_NAME.test(name)) {
      throw new Error(`token name \`${name.slice(0, 64)}\`: use lowercase letters, digits and _ (at most 64)`);
    }
    if (seen.has(value)) {
      throw new Error(
        `the token of \`${name}\` is also another token: give every agent and every approver a token of its own`,
      );
    }
    seen.add(value);
  }
}

/**
 * The servers each named agent may decide for, compiled (`agentServers`); throws for a name no agent's
 * token has, an empty list, or a pattern that is not a server name or glob.
 */
function compileServerScopes(
  agentServers: Readonly<Record<string, readonly string[]>> | undefined,
  agentTokens: ReadonlyMap<string, string>,
): ServerScopes {
  const scopes = new Map<string, { patterns: readonly string[]; test: (server: string) => boolean }>();
  for (const [agent, patterns] of Object.entries(agentServers ?? {}) as [string, unknown][]) {
    if (!agentTokens.has(agent)) throw new Error(`agent servers: \`${agent}\` is no agent of the agents' tokens`);
    if (!Array.isArray(patterns) || patterns.length === 0) {
      throw new Error(`agent servers: \`${agent}\` must list at least one server (name or glob)`);
    }
    const list: unknown[] = patterns;
    const tests = list.map((pattern) => {
      const glob = typeof pattern === "string" ? compileGlob(pattern) : undefined;
      if (glob?.ok !== true)
        throw new Error(`agent servers: \`${agent}\`: \`${String(pattern)}\` is not a server name or glob`);
      return glob.value;
    });
    scopes.set(agent, { patterns: patterns as string[], test: (server) => tests.some((test) => test(server)) });
  }
  return scopes;
}

/** Checks the service's inputs; throws the first problem (nothing is opened or started). */
export function checkServerOptions(options: CheckedServerInputs): CheckedServerOptions {
  // a JavaScript caller without them would have every caller's `server` trusted: said at once, not failed open
  for (const key of ["anyServerPipeline", "anyServerRecheckPipeline"] as const) {
    if (options[key] === undefined)
      throw new Error(
        `${key} is required: the pipeline for callers whose server is only their word (anyServerPipelineOf, ` +
          "ADR 0006), or the pipeline itself to judge every caller as named",
      );
  }
  let publicUrl: PublicUrl | undefined;
  if (options.publicUrl !== undefined) {
    const parsed = parsePublicUrl(options.publicUrl);
    if (!parsed.ok) throw new Error(`public URL: ${parsed.message}`);
    publicUrl = parsed.value;
  }
  const agentTokens = new Map(Object.entries(options.agentTokens ?? {}));
  const approverTokens = new Map(Object.entries(options.approverTokens ?? {}));
  checkNamedTokens([agentTokens, approverTokens], options.token, options.approverToken);
  if (options.approverToken !== undefined && options.approverToken === options.token) {
    throw new Error(
      "the approvers' token must differ from the agents' bearer token: an agent holding it could approve its own requests",
    );
  }
  const serverScopes = compileServerScopes(options.agentServers, agentTokens);
  if (options.tls !== undefined) {
    // the HTTPS listener would refuse them when the app is built, after the stores were opened for nothing
    try {
      createSecureContext({ key: options.tls.key, cert: options.tls.cert });
    } catch (err) {
      throw new Error(
        `tls: the key and certificate cannot serve HTTPS (${err instanceof Error ? err.message : String(err)})`,
      );
    }
  }
  return { ...(publicUrl !== undefined ? { publicUrl } : {}), agentTokens, approverTokens, serverScopes };
}
