import { isIP } from "node:net";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { AdmissionControl } from "../admission/admission-control.js";
import type { AdmissionPolicy } from "./admission-gate.js";
import type { ProgressiveLockout, WindowCounter } from "../admission/rate-limiter.js";
import type { PublishedContentIndex } from "../content/similarity.js";
import type { DpopReplay } from "../secrets/dpop.js";
import type { SecretBox } from "../secrets/keyed-hash.js";
import type { ClaimStore } from "../store/claim-store.js";
import type { ClaimHosts, OriginKind } from "./origins.js";

/** One log line (§22): never a token, code, handle, URL or header; the internal sandbox id; a coarse source. */
export interface ClaimLogEntry {
  readonly time: string;
  readonly request_id: string;
  readonly action: string;
  readonly status: number;
  readonly ip_range: string;
  readonly sandbox_id?: string;
}

/** Per-request facts the hooks attach. */
export interface RequestFacts {
  readonly requestId: string;
  readonly kind: OriginKind | undefined;
  readonly handle: string | undefined;
  readonly source: string;
  action: string;
  sandboxId?: string;
}

/** What every route handler shares. */
export interface ClaimRuntime {
  readonly store: ClaimStore;
  readonly box: SecretBox;
  readonly admission: AdmissionControl;
  /** Issuer tokens and persistent reputation beside the proof-of-work (§11.2). */
  readonly policy: AdmissionPolicy;
  readonly hosts: ClaimHosts;
  readonly tls: boolean;
  readonly now: () => number;
  readonly minFailureMs: number;
  readonly ttlMs: number;
  readonly providerName: string;
  readonly claimRate: WindowCounter;
  readonly codeRate: WindowCounter;
  readonly lockout: ProgressiveLockout;
  readonly claimPerIpPerHour: number;
  readonly claimPerCodePerHour: number;
  /** Agent requests per sandbox per hour (§28: 500). */
  readonly sandboxRate: WindowCounter;
  readonly requestsPerSandboxPerHour: number;
  /** Claim codes issued per sandbox per hour (§19.1: each lives up to an hour, so this bounds the live ones too). */
  readonly claimCodeRate: WindowCounter;
  readonly claimCodesPerSandboxPerHour: number;
  /** Publications (and published-content edits) per sandbox and per source range per hour (§23.2). */
  readonly publishRate: WindowCounter;
  readonly publishPerSandboxPerHour: number;
  readonly publishPerSourcePerHour: number;
  /** Fingerprints of recently published content across sandboxes (§23.3 similarity). */
  readonly published: PublishedContentIndex;
  /** DPoP proof ids seen (§20.1 proof-of-possession; one use per proof, across the nodes on one store). */
  readonly dpopReplay: DpopReplay;
  facts(req: FastifyRequest): RequestFacts;
  fail(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
  /** The 429 answer; `retryAfterS` is when a retry can succeed (from the window or lockout that refused). */
  limited(req: FastifyRequest, reply: FastifyReply, retryAfterS: number): Promise<FastifyReply>;
  origin(req: FastifyRequest, host: string): string;
}

/** A Set-Cookie value: host-only (scoped to the origin that set it), HttpOnly, SameSite=Strict, Secure with TLS. */
export function cookie(rt: ClaimRuntime, name: string, value: string, maxAgeSec: number): string {
  const n = rt.tls ? `__Host-${name}` : name;
  return `${n}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSec}${rt.tls ? "; Secure" : ""}`;
}

/** Reads a cookie set by {@link cookie}. */
export function readCookie(rt: ClaimRuntime, req: FastifyRequest, name: string): string | undefined {
  const n = rt.tls ? `__Host-${name}` : name;
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === n) return v.join("=");
  }
  return undefined;
}

/** An address as compared with trusted proxies: lower case, an IPv4-mapped IPv6 address as its IPv4 address. */
export function bareAddress(a: string): string {
  return a.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "").toLowerCase();
}

/**
 * The client's address: the peer's, unless the peer is a reverse proxy the operator trusts; then the rightmost
 * `X-Forwarded-For` hop that is not itself a trusted proxy (the one the proxy appended; hops further left are
 * the client's word). A hop that is not an IP address, or none, leaves the peer's address: every such request
 * shares the proxy's range (fail closed) rather than becoming a source of its own.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: ReadonlySet<string>,
): string | undefined {
  const bare = bareAddress;
  if (peer === undefined || !trusted.has(bare(peer))) return peer;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : (forwardedFor ?? ""))
    .split(",")
    .map((h) => h.trim());
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = bare(hops[i] ?? "");
    if (isIP(hop) === 0) return peer;
    if (!trusted.has(hop)) return hop;
  }
  return peer;
}

/**
 * The coarse source of a request: the /24 of an IPv4 address (IPv4-mapped IPv6 included), the /48 of an IPv6
 * address as its first three groups (`2001:db8:0::/48`). The address is expanded first: `2001:db8::5` and
 * `2001:db8:0:1::5` are one /48, and `2001::5` and `2001::6` are too, however `::` compressed them.
 */
export function coarseSource(address: string | undefined): string {
  const a = (address ?? "unknown").replace(/%.*$/, "").toLowerCase();
  const v4 = /^(?:::ffff:)?(\d+\.\d+\.\d+)\.\d+$/.exec(a);
  if (v4 !== null) return `${v4[1]}.0/24`;
  if (!a.includes(":")) return a;
  const groups = ipv6Groups(a);
  return groups === undefined ? "unknown" : `${groups.slice(0, 3).join(":")}::/48`;
}

/** The eight groups of an IPv6 address (hex, no leading zeros), or undefined when it is not one. */
function ipv6Groups(a: string): string[] | undefined {
  const halves = a.split("::");
  if (halves.length > 2) return undefined;
  const part = (h: string | undefined): string[] => (h === undefined || h === "" ? [] : h.split(":"));
  const head = part(halves[0]);
  const tail = part(halves[1]);
  const last = tail.length > 0 ? tail : head;
  const dotted = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(last[last.length - 1] ?? "");
  if (dotted !== null) {
    const [b0, b1, b2, b3] = dotted.slice(1).map(Number) as [number, number, number, number];
    last.splice(-1, 1, ((b0 << 8) | b1).toString(16), ((b2 << 8) | b3).toString(16));
  }
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...Array<string>(halves.length === 1 ? 0 : missing).fill("0"), ...tail];
  if (!all.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return undefined;
  return all.map((g) => parseInt(g, 16).toString(16));
}

/**
 * The keyed hash a browser session is stored under, bound to the user agent that opened it (§17.2 SHOULD bind
 * to user-agent characteristics): the cookie value plus the `User-Agent` header. The same cookie replayed from
 * another browser or tool hashes differently and finds nothing — the one failure answer, no oracle.
 */
export function sessionHash(rt: ClaimRuntime, req: FastifyRequest, cookieValue: string): string {
  const ua = (req.headers["user-agent"] ?? "").slice(0, 512);
  return rt.box.hash("session", `${cookieValue}\0${ua}`);
}

/** The URL a request was made to, as a DPoP proof's `htu` names it: scheme, Host header, path (no query). */
export function requestUrl(rt: ClaimRuntime, req: FastifyRequest): string {
  return `${rt.tls ? "https" : "http"}://${req.headers.host ?? ""}${req.url.split("?")[0] ?? ""}`;
}

/** The keyed hash an agent token is stored under: bound to its DPoP key's thumbprint when it has one. */
export function agentTokenHash(rt: ClaimRuntime, token: string, jkt: string | undefined): string {
  return rt.box.hash("agent_token", jkt === undefined ? token : `${token}\0dpop:${jkt}`);
}
