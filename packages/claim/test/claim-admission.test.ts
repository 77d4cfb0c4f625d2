import { afterEach, describe, expect, it } from "vitest";
import { FAILURE_BODY, issueChallenge, createSecretBox } from "../src/index.js";
import { createSandbox, num, shape, solve, str, startProvider, type Provider } from "./harness.js";

let p: Provider;
afterEach(async () => p?.close());

async function challenge(from?: string): Promise<{ challenge: string; difficulty: number }> {
  const r = await p.req("api.localhost", "GET", "/v1/sandboxes/challenge", from === undefined ? {} : { from });
  expect(r.status).toBe(200);
  const j = r.json();
  return { challenge: str(j, "challenge"), difficulty: num(j, "difficulty") };
}

const create = (c: string, nonce: string) =>
  p.req("api.localhost", "POST", "/v1/sandboxes", {
    json: { admission: { type: "proof_of_work", challenge: c, nonce } },
  });

describe("§11 Admission control", () => {
  it("MUST §11.1 / App. B PoW required: no admission, a wrong nonce or a malformed nonce get the one failure", async () => {
    p = await startProvider();
    const c = await challenge();
    const none = await p.req("api.localhost", "POST", "/v1/sandboxes", { json: { metadata: {} } });
    const wrong = await create(c.challenge, "x");
    const bad = await create(c.challenge, "not a nonce!");
    for (const r of [none, wrong, bad]) expect(r.body).toBe(FAILURE_BODY);
    expect(shape(none)).toEqual(shape(wrong));
    const ok = await create(c.challenge, solve(c.challenge, c.difficulty));
    expect(ok.status).toBe(201);
  });

  it("§7.1 / §29: challenges are single use, signed (difficulty cannot be lowered) and expire after 5 minutes", async () => {
    p = await startProvider();
    const c = await challenge();
    expect(c.challenge).toMatch(/^v1-8-\d+-[0-9a-f]{32}-[0-9a-f]{32}$/);
    const nonce = solve(c.challenge, c.difficulty);
    expect((await create(c.challenge, nonce)).status).toBe(201);
    const again = await create(c.challenge, nonce);
    expect(again.body).toBe(FAILURE_BODY);
    const forged = c.challenge.replace(/^v1-8-/, "v1-1-");
    expect((await create(forged, solve(forged, 1))).body).toBe(FAILURE_BODY);
    const late = await challenge();
    p.advance(5 * 60_000 + 1000);
    expect((await create(late.challenge, solve(late.challenge, late.difficulty))).body).toBe(FAILURE_BODY);
    const foreign = issueChallenge(
      createSecretBox(Buffer.alloc(32, 7)),
      "create",
      "",
      1,
      Date.parse("2026-03-01T12:06:00Z"),
    );
    expect((await create(foreign.challenge, solve(foreign.challenge, 1))).body).toBe(FAILURE_BODY);
  });

  it("MUST §11.2 / App. B PoW difficulty is adaptive per source: creation velocity raises it for that source only", async () => {
    p = await startProvider({ admission: { baseDifficulty: 4, maxDifficulty: 10, freeCreationsPerSource: 1 } });
    expect((await challenge()).difficulty).toBe(4);
    await createSandbox(p);
    await createSandbox(p);
    await createSandbox(p);
    expect((await challenge()).difficulty).toBe(6);
    expect((await challenge("127.0.1.1")).difficulty).toBe(4);
  });

  it("MUST §11.2 difficulty rises with failures and is capped at the elevated maximum", async () => {
    p = await startProvider({ admission: { baseDifficulty: 4, maxDifficulty: 5 } });
    const c = await challenge();
    for (let i = 0; i < 20; i++) await create(c.challenge, "0");
    expect((await challenge()).difficulty).toBe(5);
  });

  it("MUST §11.2 increase difficulty during attack conditions: a provider-wide creation surge raises it for every source, even a new one", async () => {
    p = await startProvider({ admission: { baseDifficulty: 4, maxDifficulty: 10, globalSurchargeAt: 3 } });
    expect((await challenge("127.0.1.1")).difficulty).toBe(4);
    for (let i = 0; i < 3; i++) await createSandbox(p); // within 127.0.0.1's free creations
    expect((await challenge("127.0.1.1")).difficulty).toBe(6);
    expect((await challenge()).difficulty).toBe(6);
    p.advance(10 * 60_000);
    expect((await challenge("127.0.1.1")).difficulty).toBe(4);
  });

  it("SHOULD §11.2 circuit breaker: a creation spike pauses admission with 503", async () => {
    p = await startProvider({ admission: { baseDifficulty: 2, breakerAt: 2 } });
    await createSandbox(p);
    await createSandbox(p);
    const r = await p.req("api.localhost", "GET", "/v1/sandboxes/challenge");
    expect(r.status).toBe(503);
    expect(str(r.json(), "error.code")).toBe("claim_admission_paused");
  });

  it("MUST §10 / App. B behavioural throttling: rate limiting applies before any existence check (same 429 for a live and an unknown handle)", async () => {
    p = await startProvider({ requestsPerIpPerHour: 6 });
    const a = await createSandbox(p);
    for (let i = 0; i < 4; i++) await p.req("api.localhost", "GET", "/.well-known/agent-access");
    const live = await p.req(`${a.handle}.pub.localhost`, "GET", "/");
    const unknown = await p.req("aaaaaaaaaaaaaaaaaaaaaaaaaa.pub.localhost", "GET", "/");
    expect(live.status).toBe(429);
    expect(shape(live)).toEqual(shape(unknown));
  });
});
