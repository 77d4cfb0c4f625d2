#!/usr/bin/env node
// `acp serve` throughput: POST /pre-tool-check (the document's public-read event, bearer token, the
// starter policy, SQLite state, every decision appended to the hash-chained audit log) with autocannon
// at 1, 10 and 100 connections; prints requests/s and p99 latency, against a bare Fastify route that
// returns the same envelope (the peer: what the HTTP stack alone costs). Each server runs in its own
// process (this file with `--child acp|bare`), so autocannon does not share its event loop. Target: >= 10,000 req/s.
// Needs the built packages (`npm run build`); writes only into a temporary directory.
import { fork } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import Fastify from "fastify";

const core = await import("../../packages/core/dist/index.js");
const store = await import("../../packages/store/dist/index.js");
const server = await import("../../packages/server/dist/index.js");

const DURATION = Number(process.env.ACP_BENCH_SERVE_SECONDS ?? 5);
const TOKEN = "bench-token";
const EVENT = JSON.stringify({
  tool_name: "search_docs",
  tool_category: "public_read",
  authorization_state: "none",
  evidence_refs: [],
  risk_domain: "research",
  proposed_arguments: { query: "Agent Action Contract v1" },
  recommended_route: "accept",
});

function pipeline() {
  const parsed = core.parsePolicy(store.STARTER_POLICY, { file: "policy.yml" });
  const sources = [
    core.policySource(core.compilePolicy(parsed.value), { rateLimiter: core.createMemoryRateLimiter() }),
    core.contractSource(),
  ];
  return core.createPipeline(sources, { classify: parsed.value.classify });
}

async function run(url, connections) {
  const result = await autocannon({
    url: `${url}/pre-tool-check`,
    method: "POST",
    connections,
    duration: DURATION,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: EVENT,
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { rps: result.requests.average, p99: result.latency.p99 };
}

async function bare() {
  const app = Fastify({ logger: false });
  const envelope = core.checkToolPrecheck(JSON.parse(EVENT));
  app.post("/pre-tool-check", async () => envelope);
  await app.listen({ port: 0, host: "127.0.0.1" });
  return { url: `http://127.0.0.1:${app.server.address().port}`, close: () => app.close(), verify: async () => null };
}

async function acpServer(dir) {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const publicKeyHex = Buffer.from(publicKey.export({ format: "jwk" }).x, "base64url").toString("hex");
  const acp = await server.openEmbeddedServer({
    statePath: join(dir, "state.db"),
    auditPath: join(dir, "audit.jsonl"),
    pipeline: pipeline(),
    simulationPipeline: pipeline(),
    keys: { privateKey, publicKey, publicKeyHex },
    clock: () => new Date(),
    token: TOKEN,
    loopbackOnly: true,
  });
  const url = await acp.server.listen({ port: 0, host: "127.0.0.1" });
  return {
    url,
    close: () => acp.close(),
    verify: async () => {
      await acp.auditLog.flush();
      const v = await acp.stores.audit.verify();
      return { ok: v.ok, count: v.count };
    },
  };
}

/** Child mode: serve, report the URL, answer `verify`, exit on `close`. */
async function child(kind) {
  const dir = mkdtempSync(join(tmpdir(), "acp-bench-serve-"));
  const s = kind === "acp" ? await acpServer(dir) : await bare();
  process.send({ url: s.url });
  process.on("message", async (m) => {
    if (m === "verify") process.send({ verified: await s.verify() });
    if (m === "close") {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    }
  });
}

/** Starts a server process; resolves with its URL and a way to ask it things. */
async function start(kind) {
  const proc = fork(new URL(import.meta.url).pathname, ["--child", kind], { stdio: "inherit" });
  const [ready] = await once(proc, "message");
  return {
    url: ready.url,
    ask: async (m) => {
      proc.send(m);
      const [answer] = await once(proc, "message");
      return answer;
    },
    close: async () => {
      proc.send("close");
      await once(proc, "exit");
    },
  };
}

if (process.argv[2] === "--child") {
  await child(process.argv[3]);
} else {
  const acp = await start("acp");
  const peer = await start("bare");
  try {
    const fmt = (x) => Math.round(x).toLocaleString("en-US").padStart(10);
    process.stdout.write(
      `POST /pre-tool-check, ${DURATION}s per row, SQLite state, audit fsync batch, server in its own process\n\n`,
    );
    process.stdout.write(
      `conns  ${"acp req/s".padStart(10)} ${"p99 ms".padStart(7)}  ${"bare req/s".padStart(10)} ${"p99 ms".padStart(7)}  acp / bare\n`,
    );
    let best = 0;
    for (const connections of [1, 10, 100]) {
      const a = await run(acp.url, connections);
      const b = await run(peer.url, connections);
      best = Math.max(best, a.rps);
      process.stdout.write(
        `${String(connections).padStart(5)}  ${fmt(a.rps)} ${String(a.p99).padStart(7)}  ${fmt(b.rps)} ${String(b.p99).padStart(7)}  ${(a.rps / b.rps).toFixed(2)}\n`,
      );
    }
    const { verified } = await acp.ask("verify");
    process.stdout.write(`audit chain verifies: ${verified.ok} (${verified.count.toLocaleString("en-US")} events)\n`);
    process.stdout.write(
      `target >= 10,000 req/s with SQLite: ${best >= 10_000 ? "met" : "NOT met"} (best ${fmt(best).trim()})\n`,
    );
  } finally {
    await acp.close();
    await peer.close();
  }
}
