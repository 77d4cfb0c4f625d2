#!/usr/bin/env node
// Agent Claim Protocol §10: can the four failure modes of the preview exchange (not found, expired, invalid,
// already used) be told apart by response time? Runs the provider on 127.0.0.1, sends the four kinds of POST
// /exchange interleaved, and reports per mode the median / p90 and, per pair, the two-sample Kolmogorov–Smirnov
// statistic D with its 5 % critical value (D below it: the distributions are not distinguishable at that level).
// A statistic, not an assertion. Imports the built packages (`npx tsc -b packages/claim`).
import { request } from "node:http";
import { randomBytes } from "node:crypto";
import { openStateDb } from "../../packages/store/dist/index.js";
import { createClaimServer, solveMidstate } from "../../packages/claim/dist/index.js";

const N = Number(process.env.ACP_BENCH_TIMING_N ?? 150);
const MIN_MS = Number(process.env.ACP_BENCH_TIMING_MIN_MS ?? 50);
let offset = 0;
const server = createClaimServer({
  db: openStateDb(":memory:"),
  key: randomBytes(32),
  now: () => Date.now() + offset,
  minFailureMs: MIN_MS,
  admission: { baseDifficulty: 8 },
  requestsPerIpPerHour: 1e9,
  requestsPerSandboxPerHour: 1e9,
});
const port = await server.listen(0);

function req(host, method, path, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const t = process.hrtime.bigint();
    const r = request(
      { host: "127.0.0.1", port, method, path, headers: { host: `${host}:${port}`, ...headers } },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode,
            body: Buffer.concat(chunks).toString(),
            ms: Number(process.hrtime.bigint() - t) / 1e6,
          }),
        );
      },
    );
    r.on("error", reject);
    r.end(body);
  });
}
const json = (o) => [JSON.stringify(o), { "content-type": "application/json" }];
const form = (code) => [`code=${encodeURIComponent(code)}`, { "content-type": "application/x-www-form-urlencoded" }];

const c = JSON.parse((await req("api.localhost", "GET", "/v1/sandboxes/challenge")).body);
const nonce = solveMidstate(c.challenge, c.difficulty, 0, 1 << 26);
const created = JSON.parse(
  (
    await req(
      "api.localhost",
      "POST",
      "/v1/sandboxes",
      ...json({ admission: { type: "proof_of_work", challenge: c.challenge, nonce } }),
    )
  ).body,
);
const auth = { authorization: `Bearer ${created.agent_token.token}` };
const exchange = async () => {
  const [b, h] = json({});
  const r = await req("api.localhost", "POST", `/v1/sandboxes/${created.id}/preview`, b, { ...h, ...auth });
  return new URL(JSON.parse(r.body).exchange_url).searchParams.get("code");
};
const used = await exchange();
await req("preview.localhost", "POST", "/exchange", ...form(used));
const expired = await exchange();
offset = 11 * 60_000;
const modes = {
  not_found: () => `acp_exch_${randomBytes(16).toString("base64url").replace(/[-_]/g, "A").slice(0, 22)}`,
  expired: () => expired,
  invalid: () => "not-a-code",
  already_used: () => used,
};
const samples = Object.fromEntries(Object.keys(modes).map((k) => [k, []]));
const bodies = new Set();
for (let i = 0; i < N; i++) {
  for (const [k, code] of Object.entries(modes)) {
    const r = await req("preview.localhost", "POST", "/exchange", ...form(code()));
    samples[k].push(r.ms);
    bodies.add(`${r.status} ${r.body}`);
  }
}
await server.close();

const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
function ks(a, b) {
  const xs = [...a].sort((x, y) => x - y);
  const ys = [...b].sort((x, y) => x - y);
  let i = 0,
    j = 0,
    d = 0;
  while (i < xs.length && j < ys.length) {
    if (xs[i] <= ys[j]) i++;
    else j++;
    d = Math.max(d, Math.abs(i / xs.length - j / ys.length));
  }
  return d;
}
console.log(`preview exchange failures, ${N} samples per mode, minimum response time ${MIN_MS} ms`);
console.log(`distinct (status, body) pairs across all failures: ${bodies.size}`);
for (const [k, xs] of Object.entries(samples))
  console.log(
    `${k.padEnd(14)} median ${q(xs, 0.5).toFixed(2)} ms  p90 ${q(xs, 0.9).toFixed(2)} ms  max ${Math.max(...xs).toFixed(2)} ms`,
  );
const crit = 1.358 * Math.sqrt(2 / N);
const names = Object.keys(samples);
for (let a = 0; a < names.length; a++)
  for (let b = a + 1; b < names.length; b++) {
    const d = ks(samples[names[a]], samples[names[b]]);
    console.log(
      `KS ${names[a]} vs ${names[b]}: D = ${d.toFixed(3)} (5 % critical ${crit.toFixed(3)}) ${d < crit ? "not distinguishable" : "DISTINGUISHABLE"}`,
    );
  }
