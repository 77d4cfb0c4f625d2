/**
 * Whether the sandbox may open one connection: the allow-list passes it; loopback, unspecified and link-local
 * destinations, and the host's own addresses on any interface, are refused unless listed literally (they lead
 * to ACP itself, to the approval channels and to whatever else the host serves on all interfaces);
 * every other destination is a `network.connect` consent request, denied when nobody answers. A name is
 * resolved only once it is let through: a lookup of a name the agent made up would carry its data out to
 * whoever serves that domain's DNS.
 */
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { networkInterfaces, type NetworkInterfaceInfo } from "node:os";
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
  /**
   * The host's interfaces, read at every decision (an address may come up while the agent runs); default
   * `os.networkInterfaces`. Their addresses are refused like loopback.
   */
  readonly interfaces?: () => NodeJS.Dict<NetworkInterfaceInfo[]>;
}

/** Decides destinations; remembers session-scoped approvals for the run. */
export interface EgressDecider {
  decide(host: string, port: number, signal: AbortSignal): Promise<EgressVerdict>;
}

/**
 * Loopback, unspecified ("this host") and link-local ranges. IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`)
 * are checked against the IPv4 ranges by `BlockList` itself; the IPv4-compatible ones (`::a.b.c.d`, which
 * also hold `::` and `::1`) are listed.
 */
const LOCAL = new BlockList();
for (const [v4, prefix] of [
  ["0.0.0.0", 8],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
] as const) {
  LOCAL.addSubnet(v4, prefix, "ipv4");
  LOCAL.addSubnet(`::${v4}`, 96 + prefix, "ipv6");
}
LOCAL.addSubnet("fe80::", 10, "ipv6");

/**
 * Whether an address is loopback, unspecified or link-local (never reachable by consent), or one of
 * `hostAddresses` (the host's own, from `hostAddressList`), in any spelling the URL parser or the resolver
 * may give: `::ffff:127.0.0.1` arrives as `::ffff:7f00:1`. Anything that is not an address counts as local
 * (refused).
 */
export function isLocalAddress(address: string, hostAddresses?: BlockList): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const type = family === 4 ? "ipv4" : "ipv6";
  return LOCAL.check(address, type) || (hostAddresses?.check(address, type) ?? false);
}

/**
 * The host's own addresses on every interface (a service listening on all interfaces answers on each), as a
 * `BlockList`: an IPv4 address also in its IPv4-compatible IPv6 spelling (`::10.0.0.5`); the IPv4-mapped one
 * (`::ffff:10.0.0.5`) `BlockList` matches by itself. Throws when the interfaces cannot be listed.
 */
export function hostAddressList(interfaces: () => NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces): BlockList {
  const list = new BlockList();
  for (const entries of Object.values(interfaces())) {
    for (const { address } of entries ?? []) {
      const bare = address.split("%")[0] ?? address;
      if (isIP(bare) === 4) {
        list.addAddress(bare, "ipv4");
        list.addAddress(`::${bare}`, "ipv6");
      } else if (isIP(bare) === 6) list.addAddress(bare, "ipv6");
    }
  }
  return list;
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
      const literal = rule !== undefined && !rule.host.startsWith("*.");
      let hostAddresses: BlockList;
      try {
        hostAddresses = hostAddressList(options.interfaces);
      } catch (err) {
        // without the host's addresses, any destination may be the host itself: refused
        return { allowed: false, reason: `cannot list the host's addresses: ${String(err)}` };
      }
      const isLocal = (address: string): boolean => isLocalAddress(address, hostAddresses);
      const refuseLocal = (): EgressVerdict => ({
        allowed: false,
        reason: `\`${host}:${port}\` is a local address (loopback, link-local or the host's own); only a literal --allow-egress opens it`,
      });
      // names are looked up only once let through (an allow-list entry or a person's approval): the
      // lookup itself would carry the name, and whatever the agent encoded in it, to the domain's DNS
      const settle = async (by: "allow_list" | "consent" | "approved_before"): Promise<EgressVerdict> => {
        let address: string;
        try {
          address = isIP(host) !== 0 ? host : await resolve(host);
        } catch (err) {
          return {
            allowed: false,
            reason: `cannot resolve \`${host}\`: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
          };
        }
        return isLocal(address) && !literal ? refuseLocal() : { allowed: true, by, address };
      };
      if (!literal && (isIP(host) !== 0 ? isLocal(host) : isLocalName(host))) return refuseLocal();
      if (rule !== undefined) return settle("allow_list");
      const key = `${host}:${port}`;
      const until = approved.get(key);
      if (until !== undefined && until > now().getTime()) return settle("approved_before");
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
      return settle("consent");
    },
  };
}

/** `localhost` and its subdomains (RFC 6761): local without a lookup. */
function isLocalName(host: string): boolean {
  const h = host.endsWith(".") ? host.slice(0, -1) : host;
  return h === "localhost" || h.endsWith(".localhost");
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
