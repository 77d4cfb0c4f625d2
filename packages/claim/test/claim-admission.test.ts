import { afterEach, describe, expect, it } from "vitest";
import { ClaimClient, FAILURE_BODY, issueChallenge, createSecretBox } from "../src/index.js";
import { checkPow } from "../src/pow/leading-zeros.js";
import { at, createSandbox, num, shape, solve, str, startProvider, type Provider } from "./harness.js";

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
    // A nonce that really fails (a fixed "x" solved the test difficulty of 8 bits once in 256 runs).
    const wrong = await create(
      c.challenge,
      ["x", "y", "z", "w"].find((n) => !checkPow(c.challenge, n, c.difficulty)) ?? "x",
    );
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
    p.advance(10 * 60_000 + 30_000); // a sliding window forgets a hit one slice (1/20) after it has passed
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

describe("MUST §11.2 / §23.1 PoW pipelined and amortised: stockpiled challenges do not outrun the adaptive difficulty", () => {
  it("challenges fetched while the difficulty was low admit only while it still is; then 409 claim_challenge_stale, nothing spent", async () => {
    p = await startProvider({ admission: { baseDifficulty: 4, maxDifficulty: 16, freeCreationsPerSource: 2 } });
    const stock = [];
    for (let i = 0; i < 6; i++) stock.push(await challenge());
    expect(stock.map((c) => c.difficulty)).toEqual([4, 4, 4, 4, 4, 4]);
    const answers = [];
    for (const c of stock) answers.push(await create(c.challenge, solve(c.challenge, c.difficulty)));
    // Two free creations, then one more at the base: the source now needs 5 bits, then more.
    expect(answers.map((r) => r.status)).toEqual([201, 201, 201, 409, 409, 409]);
    expect(at(answers[3]!.json(), "error.code")).toBe("claim_challenge_stale");
    expect(p.db.prepare("SELECT count(*) AS n FROM claim_sandboxes").get()).toEqual({ n: 3 });
    const fresh = await challenge();
    expect(fresh.difficulty).toBe(5);
    expect((await create(fresh.challenge, solve(fresh.challenge, fresh.difficulty))).status).toBe(201);
  });

  it("the TypeScript client solves a new challenge when the difficulty rose while it solved the first", async () => {
    p = await startProvider({
      now: () => Date.now(), // the client signs its DPoP proofs with the real clock
      admission: { baseDifficulty: 4, maxDifficulty: 16, freeCreationsPerSource: 1 },
    });
    let raced = false;
    const transport = async (method: string, url: string, headers: Record<string, string>, body?: string) => {
      if (method === "POST" && new URL(url).pathname === "/v1/sandboxes" && !raced) {
        raced = true; // another agent of the same range creates two sandboxes meanwhile
        await createSandbox(p);
        await createSandbox(p);
      }
      return p.req(new URL(url).hostname, method, new URL(url).pathname, {
        headers,
        ...(body === undefined ? {} : { json: JSON.parse(body) as unknown }),
      });
    };
    const client = new ClaimClient(`http://api.localhost:${p.port}`, { solve: { workers: 0 }, transport });
    const s = await client.createSandbox();
    expect(s.id).toMatch(/^sbx_/);
    expect(p.db.prepare("SELECT count(*) AS n FROM claim_sandboxes").get()).toEqual({ n: 3 });
  });
});
