import { request } from "node:http";
import { randomBytes } from "node:crypto";
import { openStateDb } from "@acp/store";
import type { Database } from "better-sqlite3";
import { createClaimServer, type ClaimLogEntry, type ClaimServer, type ClaimServerOptions } from "../src/index.js";
import { solveMidstate } from "../src/pow/sha256-midstate.js";

/** A raw HTTP answer. */
export interface Res {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  json(): unknown;
}

/** A provider on 127.0.0.1 with a test clock, low difficulty and a captured log. */
export interface Provider {
  readonly server: ClaimServer;
  /** The state database (white-box checks only). */
  readonly db: Database;
  readonly port: number;
  readonly logs: ClaimLogEntry[];
  /** Moves the test clock forward. */
  advance(ms: number): void;
  /** One request to `host` (the Host header; the port is added) on 127.0.0.1. */
  req(
    host: string,
    method: string,
    path: string,
    opts?: {
      json?: unknown;
      /** A raw JSON text, sent as is (for bodies `JSON.stringify` cannot make: lone surrogates, deep nesting). */
      rawJson?: string;
      form?: Record<string, string>;
      /** A body sent as is, with only the headers given (for wrong content types). */
      raw?: string;
      headers?: Record<string, string>;
      from?: string;
    },
  ): Promise<Res>;
  close(): Promise<void>;
}

/** Starts a provider for one test. */
export async function startProvider(overrides: Partial<ClaimServerOptions> = {}): Promise<Provider> {
  let t = Date.parse("2026-03-01T12:00:00Z");
  const logs: ClaimLogEntry[] = [];
  const db = openStateDb(":memory:");
  const server = createClaimServer({
    ...(overrides.postgres === undefined ? { db } : {}),
    key: randomBytes(32),
    now: () => t,
    minFailureMs: 2,
    admission: { baseDifficulty: 8, maxDifficulty: 16 },
    log: (e) => logs.push(e),
    ...overrides,
  });
  const port = await server.listen(0);
  const req: Provider["req"] = (host, method, path, opts = {}) =>
    new Promise((resolve, reject) => {
      let body: string | undefined;
      const headers: Record<string, string> = { host: `${host}:${port}`, ...opts.headers };
      if (opts.json !== undefined || opts.rawJson !== undefined) {
        body = opts.rawJson ?? JSON.stringify(opts.json);
        headers["content-type"] = "application/json";
      } else if (opts.raw !== undefined) {
        body = opts.raw;
      } else if (opts.form !== undefined) {
        body = new URLSearchParams(opts.form).toString();
        headers["content-type"] = "application/x-www-form-urlencoded";
      }
      const r = request(
        {
          host: "127.0.0.1",
          port,
          method,
          path,
          headers,
          ...(opts.from === undefined ? {} : { localAddress: opts.from }),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: text,
              json: (): unknown => JSON.parse(text),
            });
          });
        },
      );
      r.on("error", reject);
      r.end(body);
    });
  return {
    server,
    db,
    port,
    logs,
    advance: (ms) => {
      t += ms;
    },
    req,
    close: () => server.close(),
  };
}

/** Solves a challenge on this thread (test difficulties are low). */
export function solve(challenge: string, difficulty: number): string {
  const n = solveMidstate(challenge, difficulty, 0, 1 << 26);
  if (n === undefined) throw new Error("unsolved");
  return n;
}

/** An agent's view after creating a sandbox. */
export interface Agent {
  readonly id: string;
  readonly token: string;
  readonly handle: string;
  readonly auth: Record<string, string>;
  readonly created: unknown;
}

/** Creates a sandbox through the real API. */
export async function createSandbox(p: Provider, from?: string): Promise<Agent> {
  const c = (await p.req("api.localhost", "GET", "/v1/sandboxes/challenge", from === undefined ? {} : { from })).json();
  const nonce = solve(str(c, "challenge"), num(c, "difficulty"));
  const r = await p.req("api.localhost", "POST", "/v1/sandboxes", {
    json: { admission: { type: "proof_of_work", challenge: str(c, "challenge"), nonce } },
    ...(from === undefined ? {} : { from }),
  });
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.body}`);
  const j = r.json();
  return {
    id: str(j, "id"),
    token: str(j, "agent_token.token"),
    handle: str(j, "public_handle"),
    auth: { authorization: `Bearer ${str(j, "agent_token.token")}` },
    created: j,
  };
}

/** A small valid FAQ. */
export const SAMPLE_FAQ = {
  title: "Acme help",
  description: "Questions people ask about Acme",
  questions: [
    { question: "What is Acme?", answer: "A **tool**. See [docs](https://example.com/docs)." },
    { question: "Is it free?", answer: "Yes.\n\n- forever\n- for everyone" },
  ],
};

/** Creates and publishes an FAQ; returns the publish answer and the FAQ id. */
export async function publishFaq(
  p: Provider,
  a: Agent,
  faq: Record<string, unknown> = SAMPLE_FAQ,
): Promise<{ faqId: string; pub: unknown }> {
  const f = await p.req("api.localhost", "POST", "/v1/faqs", { json: faq, headers: a.auth });
  if (f.status !== 201) throw new Error(`faq failed: ${f.status} ${f.body}`);
  const faqId = str(f.json(), "faq_id");
  const pub = await p.req("api.localhost", "POST", `/v1/faqs/${faqId}/publish`, { headers: a.auth });
  if (pub.status !== 200) throw new Error(`publish failed: ${pub.status} ${pub.body}`);
  return { faqId, pub: pub.json() };
}

/**
 * The headers a browser sends with a form POST from a page of `host` (the exchange button): `Origin` and
 * `Sec-Fetch-Site: same-origin`. The provider refuses an exchange POST that names no origin at all.
 */
export function fromPage(p: Provider, host: string): Record<string, string> {
  return { origin: `http://${host}:${p.port}`, "sec-fetch-site": "same-origin" };
}

/** Cookie pairs from a response, as a Cookie header value. */
export function cookiesOf(res: Res): string {
  const raw = res.headers["set-cookie"];
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return list.map((c) => c.split(";")[0]).join("; ");
}

/** Runs the human side of a claim through the admin origin; returns the verify answer and the owner cookie. */
export async function humanClaim(p: Provider, code: string, from?: string): Promise<{ verify: Res; cookie: string }> {
  const opt = from === undefined ? {} : { from };
  const page = await p.req("admin.localhost", "GET", "/claim", opt);
  const cookie = cookiesOf(page);
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? "";
  const ch = await p.req("admin.localhost", "POST", "/claim/challenge", {
    json: { code, csrf },
    headers: { cookie },
    ...opt,
  });
  if (ch.status !== 200) return { verify: ch, cookie: "" };
  const c = ch.json();
  const nonce = solve(str(c, "challenge"), num(c, "difficulty"));
  const verify = await p.req("admin.localhost", "POST", "/claim/verify", {
    json: { code, csrf, challenge: str(c, "challenge"), nonce },
    headers: { cookie },
    ...opt,
  });
  return { verify, cookie: cookiesOf(verify) };
}

/** The value at a dotted path of a parsed JSON document (undefined when absent). */
export function at(doc: unknown, path: string): unknown {
  let cur: unknown = doc;
  for (const k of path.split("."))
    cur = typeof cur === "object" && cur !== null ? (cur as Record<string, unknown>)[k] : undefined;
  return cur;
}

/** The string at a dotted path (throws when it is not a string). */
export function str(doc: unknown, path: string): string {
  const v = at(doc, path);
  if (typeof v !== "string") throw new Error(`\`${path}\` is not a string: ${JSON.stringify(v)}`);
  return v;
}

/** The number at a dotted path (throws when it is not a number). */
export function num(doc: unknown, path: string): number {
  const v = at(doc, path);
  if (typeof v !== "number") throw new Error(`\`${path}\` is not a number: ${JSON.stringify(v)}`);
  return v;
}

/** The parts of an answer that must not differ between failure modes (everything but the Date header). */
export function shape(r: Res): { status: number; body: string; headers: Record<string, unknown> } {
  const { date: _date, ...headers } = r.headers;
  void _date;
  return { status: r.status, body: r.body, headers };
}
