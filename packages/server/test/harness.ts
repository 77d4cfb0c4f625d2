/** A real service on 127.0.0.1 (random port) in a fresh temporary home, with the starter policy. */
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  compilePolicy,
  contractSource,
  createMemoryRateLimiter,
  createPipeline,
  parsePolicy,
  policySource,
  type Pipeline,
} from "@acp/core";
import { STARTER_POLICY } from "@acp/store";
import { openEmbeddedServer, type EmbeddedServer, type EmbeddedServerOptions, type ServiceKeyPair } from "@acp/server";

/** A running test service. */
export interface TestServer extends EmbeddedServer {
  readonly url: string;
  readonly home: string;
  readonly keys: ServiceKeyPair;
}

/** Builds the one pipeline from policy text (the starter policy by default). */
export function pipelineFor(policyText: string = STARTER_POLICY): Pipeline {
  const parsed = parsePolicy(policyText, { file: "policy.yml" });
  if (!parsed.ok) throw new Error(parsed.issues.map((i) => i.message).join("; "));
  const sources = [
    policySource(compilePolicy(parsed.value), { rateLimiter: createMemoryRateLimiter() }),
    contractSource(),
  ];
  return createPipeline(sources, { classify: parsed.value.classify });
}

/**
 * The pipelines `openEmbeddedServer` takes, on `policyText` (the starter policy by default), with every
 * caller judged as named: the pipeline is also the any-server one (ADR 0006). For the starter policy, which
 * names no server, that is how `acp serve` judges a caller whose server is only its word; a test of a policy
 * with `server:` rules builds its any-server pipelines with `anyServerPipelineOf`.
 */
export function namedPipelines(policyText?: string): {
  readonly pipeline: Pipeline;
  readonly simulationPipeline: Pipeline;
  readonly anyServerPipeline: Pipeline;
  readonly anyServerRecheckPipeline: Pipeline;
} {
  const pipeline = pipelineFor(policyText);
  const simulationPipeline = pipelineFor(policyText);
  return { pipeline, simulationPipeline, anyServerPipeline: pipeline, anyServerRecheckPipeline: simulationPipeline };
}

/** A fresh Ed25519 key pair. */
export function testKeys(): ServiceKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const publicKeyHex = Buffer.from(publicKey.export({ format: "jwk" }).x ?? "", "base64url").toString("hex");
  return { privateKey, publicKey, publicKeyHex };
}

/**
 * Opens the embedded service on `home`'s `state.db` and `audit.jsonl` (starter policy, fresh keys, loopback
 * only) with `options` over those defaults, and listens on 127.0.0.1 at a random port. The caller closes it.
 */
export async function openTestServerAt(
  home: string,
  options: Partial<EmbeddedServerOptions> = {},
): Promise<{ readonly node: EmbeddedServer; readonly url: string }> {
  const pipeline = options.pipeline ?? pipelineFor();
  const simulationPipeline = options.simulationPipeline ?? pipelineFor();
  const node = await openEmbeddedServer({
    statePath: join(home, "state.db"),
    auditPath: join(home, "audit.jsonl"),
    pipeline,
    simulationPipeline,
    // every caller judged as named unless the test says otherwise (see `namedPipelines`)
    anyServerPipeline: pipeline,
    anyServerRecheckPipeline: options.recheckPipeline ?? simulationPipeline,
    keys: testKeys(),
    clock: () => new Date(),
    loopbackOnly: true,
    ...options,
  });
  return { node, url: await node.server.listen({ port: 0, host: "127.0.0.1" }) };
}

/** A service in a home of its own, with tokens, and a POST that sends one of them. */
export interface TokenServer {
  readonly home: string;
  readonly node: EmbeddedServer;
  readonly url: string;
  /** POSTs `body` as JSON to `path` with `Authorization: Bearer <token>`. */
  readonly post: (path: string, token: string, body: unknown) => Promise<Response>;
  readonly close: () => Promise<void>;
}

/**
 * {@link openTestServerAt} in a fresh home (`acp-<name>-…`) with the given tokens (the approvers' token
 * {@link APPROVER_TOKEN} unless told otherwise) and fast polling; `close` also removes the home.
 */
export async function openTokenServer(
  name: string,
  tokens: Pick<
    Partial<EmbeddedServerOptions>,
    "token" | "approverToken" | "agentTokens" | "approverTokens" | "agentServers" | "maxPending" | "maxPendingPerCaller"
  >,
): Promise<TokenServer> {
  const home = mkdtempSync(join(tmpdir(), `acp-${name}-`));
  const { node, url } = await openTestServerAt(home, {
    approverToken: APPROVER_TOKEN,
    answerPollMs: 20,
    changePollMs: 50,
    ...tokens,
  });
  return {
    home,
    node,
    url,
    post: (path, token, body) =>
      fetch(`${url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    close: async () => {
      await node.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** The approvers' token {@link startTestServer} configures unless told otherwise. */
export const APPROVER_TOKEN = "test-approver-token-0123456789";

/**
 * The token a request to `path` goes with: the approvers' for an answer, for the audit trail (which the
 * unnamed agents' token does not read: audit-read-scope.test.ts) and for the metrics (the operators':
 * metrics-scope.test.ts), else the agents' `token`.
 */
export function tokenFor(path: string, token: string): string {
  const route = path.split("?")[0] ?? "";
  return /\/v1\/consent\/[^/]+\/response$/.test(route) || route === "/v1/audit" || route === "/metrics"
    ? APPROVER_TOKEN
    : token;
}

/**
 * Starts a service; `token` configures the agents' bearer token, `approverToken` the approvers' (default
 * {@link APPROVER_TOKEN}; null for none). Close it with `close()` (removes the home).
 */
export async function startTestServer(
  options: {
    token?: string;
    approverToken?: string | null;
    policy?: string;
    maxPending?: number;
    maxPendingPerCaller?: number;
    bodyLimit?: number;
    /** Consent channels beside the pending table (a recording one, say). */
    extraChannels?: EmbeddedServerOptions["extraChannels"];
  } = {},
): Promise<TestServer> {
  const home = mkdtempSync(join(tmpdir(), "acp-serve-test-"));
  const keys = testKeys();
  const { node: embedded, url } = await openTestServerAt(home, {
    pipeline: pipelineFor(options.policy),
    simulationPipeline: pipelineFor(options.policy),
    keys,
    answerPollMs: 20,
    changePollMs: 50,
    ...(options.token !== undefined ? { token: options.token } : {}),
    ...(options.approverToken !== null ? { approverToken: options.approverToken ?? APPROVER_TOKEN } : {}),
    ...(options.maxPending !== undefined ? { maxPending: options.maxPending } : {}),
    ...(options.maxPendingPerCaller !== undefined ? { maxPendingPerCaller: options.maxPendingPerCaller } : {}),
    ...(options.bodyLimit !== undefined ? { bodyLimit: options.bodyLimit } : {}),
    ...(options.extraChannels !== undefined ? { extraChannels: options.extraChannels } : {}),
  });
  return {
    ...embedded,
    url,
    home,
    keys,
    async close() {
      await embedded.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Polls until `probe` gives a value; the test's timeout bounds it. */
export async function eventually<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The document's "write missing confirmation" event (route ask). */
export const WRITE_EVENT = {
  tool_name: "send_email",
  tool_category: "write",
  authorization_state: "user_claimed",
  evidence_refs: ["draft_id:123"],
  risk_domain: "customer_support",
  proposed_arguments: { to: "customer@example.com" },
  recommended_route: "accept",
} as const;

/** The document's "public read" event (route accept). */
export const READ_EVENT = {
  tool_name: "search_docs",
  tool_category: "public_read",
  authorization_state: "none",
  evidence_refs: [],
  risk_domain: "research",
  proposed_arguments: { query: "Agent Action Contract v1" },
  recommended_route: "accept",
} as const;

/** A parsed JSON body: assert on it with `toMatchObject`, read a field with {@link at}. */
export type Json = unknown;

/** Reads a response body. */
export async function readJson(res: Response): Promise<Json> {
  return await res.json();
}

/** The value at a path of keys and indexes, or undefined. */
export function at(value: Json, ...path: (string | number)[]): Json {
  let v: unknown = value;
  for (const key of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<string | number, unknown>)[key];
  }
  return v;
}

/** A raw HTTP request (node:http), for headers fetch will not send (`Host`) and bodies sent slowly. */
export function rawRequest(
  url: string,
  options: { method: string; headers: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method, headers: options.headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}
