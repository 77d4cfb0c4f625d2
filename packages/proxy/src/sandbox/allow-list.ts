/**
 * The egress allow-list: `HOST:PORT` entries from `--allow-egress` and `sandbox.allow_egress` in config.yml.
 * HOST is a name, an IPv4 address, a bracketed IPv6 address or `*.domain` (any subdomain, not the domain
 * itself); PORT is a number or `*`.
 */
import { fail, ok, type Issue, type Result } from "@acp/core";

/** One parsed entry. */
export interface EgressRule {
  readonly host: string;
  /** `null` means any port. */
  readonly port: number | null;
  /** The entry as written. */
  readonly source: string;
}

const HOST = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/** Lowercases a host and strips IPv6 brackets. */
export function normalizeHost(host: string): string {
  const h = host.trim().toLowerCase();
  return h.startsWith("[") && h.endsWith("]") ? h.slice(1, -1) : h;
}

function parseEntry(entry: string, index: number): Result<EgressRule> {
  const at = entry.lastIndexOf(":");
  const issue = (message: string): Issue => ({
    code: "sandbox_invalid_egress",
    path: ["allow_egress", index],
    message,
    help: "write HOST:PORT, e.g. api.anthropic.com:443, *.openai.com:443 or 10.0.0.5:*",
  });
  if (at <= 0) return fail([issue(`\`${entry}\` is not HOST:PORT`)]);
  const rawHost = entry.slice(0, at);
  const rawPort = entry.slice(at + 1);
  const host = normalizeHost(rawHost);
  const isV6 = rawHost.startsWith("[") && rawHost.endsWith("]") && /^[0-9a-f:.]+$/.test(host);
  if (!isV6 && !HOST.test(host)) return fail([issue(`\`${rawHost}\` is not a host name or address`)]);
  if (rawPort === "*") return ok({ host, port: null, source: entry });
  const port = Number(rawPort);
  if (!/^\d{1,5}$/.test(rawPort) || port < 1 || port > 65535) {
    return fail([issue(`\`${rawPort}\` in \`${entry}\` is not a port (1-65535 or *)`)]);
  }
  return ok({ host, port, source: entry });
}

/** Parses allow-list entries; every bad entry is an issue. */
export function parseEgressAllowList(entries: readonly string[]): Result<readonly EgressRule[]> {
  const rules: EgressRule[] = [];
  const issues: Issue[] = [];
  entries.forEach((entry, index) => {
    const r = parseEntry(entry, index);
    if (r.ok) rules.push(r.value);
    else issues.push(...r.issues);
  });
  return issues.length > 0 ? fail(issues) : ok(rules);
}

/** The rule that lets `host:port` through, or undefined. */
export function matchEgress(rules: readonly EgressRule[], host: string, port: number): EgressRule | undefined {
  const h = normalizeHost(host);
  return rules.find((rule) => {
    if (rule.port !== null && rule.port !== port) return false;
    if (rule.host.startsWith("*.")) return h.endsWith(rule.host.slice(1)) && h.length > rule.host.length - 1;
    return rule.host === h;
  });
}
