#!/usr/bin/env node
// Consent proofs: sign and verify per second. ACP's signConsentResponse (JCS payload, action hash,
// Ed25519) and checkConsentProof (strict parse, payload rebuild, hash, signature, binding, expiry), and
// verifyConsentProof with an in-memory nonce store (single use), against raw Ed25519 sign/verify of the
// same payload bytes with node:crypto: the ratio shows what the protocol costs on top of the signature.
// Imports the built core (`npx tsc -b packages/core`, or `npm run bench` which builds first).
import { randomUUID, sign, verify } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { Bench } from "tinybench";
import {
  approvedActionOf,
  checkConsentProof,
  createConsentRequest,
  createMemoryNonceStore,
  ed25519KeyPairFromSeed,
  signConsentResponse,
  signingPayloadBytes,
  signingPayloadOf,
  verifyConsentProof,
} from "../../packages/core/dist/index.js";

const TIME_MS = Number(process.env.ACP_BENCH_BUDGET_MS ?? 1000);
const T0 = new Date("2026-01-15T12:00:00.000Z");
const NOW = new Date("2026-01-15T12:00:30.000Z");
const key = ed25519KeyPairFromSeed(new Uint8Array(32).fill(42));
const deps = { now: () => T0, randomUUID };

function newRequest() {
  return createConsentRequest(
    {
      agent: { id: "agent-1", name: "assistant", command: "node agent.js" },
      action: {
        tool: "send_email",
        server: "mail",
        category: "communication",
        risk_level: "high",
        parameters: {
          to: "bob@example.com",
          subject: "Quarterly report",
          body: "See attached. ".repeat(20),
          cc: ["a@example.com", "b@example.com"],
        },
        description: "send an email",
      },
      policy: { rule_id: "ask-communication", rule_name: "ask-communication", required_level: "high" },
      timeoutSeconds: 300,
    },
    deps,
  );
}

const answer = (request) => ({
  request,
  decision: "approved",
  approver: { id: "alice", channel: "terminal" },
  validForSeconds: 120,
});
const request = newRequest();
const response = signConsentResponse(answer(request), key, { now: () => T0 });
const payload = signingPayloadBytes(signingPayloadOf(response, approvedActionOf(request, null)));
const signature = Buffer.from(response.proof.signature, "hex");
const options = { request, trustedPublicKey: key.publicKeyHex, now: NOW };
if (!checkConsentProof(response, options).ok) throw new Error("benchmark fixture does not verify");

// Fresh approvals for the single-use path: each is accepted once.
const fresh = Array.from({ length: 20_000 }, () => {
  const r = newRequest();
  return { request: r, response: signConsentResponse(answer(r), key, { now: () => T0 }) };
});
let next = 0;
const store = createMemoryNonceStore();

const bench = new Bench({ time: TIME_MS, warmupTime: 200 });
bench
  .add("raw ed25519 sign", () => sign(null, payload, key.privateKey))
  .add("acp signConsentResponse", () => signConsentResponse(answer(request), key, { now: () => T0 }))
  .add("raw ed25519 verify", () => {
    if (!verify(null, payload, key.publicKey, signature)) throw new Error("raw verify failed");
  })
  .add("acp checkConsentProof", () => {
    if (!checkConsentProof(response, options).ok) throw new Error("check failed");
  })
  .add("acp verifyConsentProof+spend", async () => {
    const item = fresh[next++ % fresh.length];
    const v = await verifyConsentProof(item.response, { ...options, request: item.request, nonceStore: store });
    if (!v.ok && v.reason !== "replayed") throw new Error(`verify failed: ${v.reason}`);
  });
await bench.run();

const ops = Object.fromEntries(bench.tasks.map((t) => [t.name, t.result?.throughput?.mean ?? 0]));
const fmt = (n) => (n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : n.toFixed(0));
process.stdout.write(
  `consent proofs, ops per second (budget ${TIME_MS} ms per task; payload ${payload.length} bytes)\n`,
);
process.stdout.write(
  `machine: ${cpus().length} cores, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}\n\n`,
);
process.stdout.write(`${"task".padEnd(30)} ${"ops/s".padStart(9)} ${"p99 µs".padStart(9)}\n`);
for (const t of bench.tasks) {
  const p99 = (t.result?.latency?.p99 ?? 0) * 1000;
  process.stdout.write(`${t.name.padEnd(30)} ${fmt(ops[t.name]).padStart(9)} ${p99.toFixed(1).padStart(9)}\n`);
}
const ratio = (a, b) => (ops[a] > 0 ? (ops[b] / ops[a]).toFixed(2) : "n/a");
process.stdout.write(
  `\nsign:   acp is ${ratio("acp signConsentResponse", "raw ed25519 sign")}x the time of a raw signature\n`,
);
process.stdout.write(
  `verify: acp is ${ratio("acp checkConsentProof", "raw ed25519 verify")}x the time of a raw verification\n`,
);
process.stdout.write(`verify+spend (single use, memory store): ${fmt(ops["acp verifyConsentProof+spend"])}/s\n`);
if (next > fresh.length)
  process.stdout.write(`(ran past ${fresh.length} fresh approvals; later ones measured the replay refusal)\n`);
