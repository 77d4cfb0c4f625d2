/**
 * Whether the sandbox may open one connection: the allow-list passes it; loopback and unspecified
 * destinations are refused unless listed literally (they lead to ACP itself and to the approval channels);
 * every other destination is a `network.connect` consent request, denied when nobody answers.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { Category, Decision } from "@acp/core";
import type { ConsentBroker } from "../gate/types.js";
import { matchEgress, normalizeHost, type EgressRule } from "./allow-list.js";

/**
 * The consent category of an egress request. The consent request's `category` is a free string on the wire
 * (§4.1); the policy vocabulary `Category` has no network entry, hence the cast.
 */
export const NETWORK_CONNECT = "network.connect" as Category;

/** The verdict on one destination. */
export type EgressVerdict =
  | { readonly allowed: true; readonly by: "allow_list" | "consent" | "approved_before"; readonly address: string }
  | { readonly allowed: false; readonly reason: string };

/** What the decision needs. */
export interface EgressDecisionOptions {
  readonly allow: readonly EgressRule[];
  readonly broker: ConsentBroker;
  readonly sessionId: string;
  readonly agent?: string;
  /** How long a person has to answer; default 120 s. */
  readonly consentTimeoutMs?: number;
  readonly now?: () => Date;
  /** Name resolution on the host (the sandbox has none); default `dns.lookup`. */
  readonly resolve?: (host: string) => Promise<string>;
}

/** Decides destinations; remembers session-scoped approvals for the run. */
export interface EgressDecider {
  decide(host: string, port: number, signal: AbortSignal): Promise<EgressVerdict>;
}

/** Whether an address is loopback, unspecified or link-local (never reachable by consent). */
export function isLocalAddress(address: string): boolean {
  const a = address.toLowerCase().replace(/^::ffff:/, "");
  if (isIP(a) === 4) return a.startsWith("127.") || a.startsWith("0.") || a.startsWith("169.254.");
  return a === "::1" || a === "::" || a.startsWith("fe80:");
}

/** Creates the decider. */
export function createEgressDecider(options: EgressDecisionOptions): EgressDecider {
  const approved = new Map<string, number>();
  const now = options.now ?? (() => new Date());
  const resolve = options.resolve ?? (async (host: string) => (await lookup(host)).address);
  return {
    async decide(rawHost, port, signal) {
      const host = normalizeHost(rawHost);
      const rule = matchEgress(options.allow, host, port);
      let address: string;
      try {
        address = isIP(host) !== 0 ? host : await resolve(host);
      } catch (err) {
        return {
          allowed: false,
          reason: `cannot resolve \`${host}\`: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
        };
      }
      if (isLocalAddress(address) && (rule === undefined || rule.host.startsWith("*."))) {
        return {
          allowed: false,
          reason: `\`${host}:${port}\` is a local address; only a literal --allow-egress opens it`,
        };
      }
      if (rule !== undefined) return { allowed: true, by: "allow_list", address };
      const key = `${host}:${port}`;
      const until = approved.get(key);
      if (until !== undefined && until > now().getTime()) return { allowed: true, by: "approved_before", address };
      const outcome = await options.broker
        .ask({
          server: "acp-sandbox",
          tool: "network.connect",
          arguments: { host, port },
          decision: askDecision(host, port, options.consentTimeoutMs),
          sessionId: options.sessionId,
          ...(options.agent !== undefined ? { agent: options.agent } : {}),
          timeoutMs: options.consentTimeoutMs ?? 120_000,
          signal,
        })
        .catch((err: unknown) => ({ kind: "denied" as const, reason: `consent failed: ${String(err)}` }));
      if (outcome.kind !== "approved") {
        const why = outcome.kind === "denied" ? outcome.reason : `nobody answered (${outcome.kind})`;
        return { allowed: false, reason: `\`${key}\` is not in the egress allow-list and was not approved: ${why}` };
      }
      if (outcome.scope === "session") approved.set(key, Number.MAX_SAFE_INTEGER);
      else if (outcome.scope !== "once") approved.set(key, Date.parse(outcome.scope.until));
      return { allowed: true, by: "consent", address };
    },
  };
}

function askDecision(host: string, port: number, timeoutMs: number | undefined): Decision {
  const message = `the sandboxed agent wants to connect to \`${host}:${port}\`, which is not in the egress allow-list`;
  return {
    route: "ask",
    action: "ask",
    rule: "sandbox:egress",
    category: NETWORK_CONNECT,
    risk_level: "medium",
    reasons: [{ source: "pipeline", code: "sandbox_egress_not_allowed", message, rule: "sandbox:egress" }],
    verdicts: [],
    ...(timeoutMs !== undefined ? { timeout: Math.ceil(timeoutMs / 1000) } : {}),
  };
}
