/**
 * §19.2 / §11.2: a claim's proof-of-work is checked against the difficulty its range needs when it is verified, not
 * only the one signed into the challenge when it was issued. The signed difficulty cannot be lowered; an old
 * challenge, fetched while the range was quiet, is refused once the difficulty has risen (409
 * `claim_challenge_stale`, nothing spent), and a new challenge then claims.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FAILURE_BODY } from "../src/index.js";
import {
  cookiesOf,
  createSandbox,
  humanClaim,
  num,
  publishFaq,
  solve,
  str,
  startProvider,
  type Provider,
} from "./harness.js";

let p: Provider;
afterEach(async () => p?.close());

async function claimSession(): Promise<{ cookie: string; csrf: string }> {
  const page = await p.req("admin.localhost", "GET", "/claim");
  return { cookie: cookiesOf(page), csrf: /name="csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? "" };
}

async function claimChallenge(s: { cookie: string; csrf: string }, code: string): Promise<{ c: string; d: number }> {
  const r = await p.req("admin.localhost", "POST", "/claim/challenge", {
    json: { code, csrf: s.csrf },
    headers: { cookie: s.cookie },
  });
  expect(r.status).toBe(200);
  return { c: str(r.json(), "challenge"), d: num(r.json(), "difficulty") };
}

describe("§19.2 claim proof-of-work difficulty at verification", () => {
  it("refuses a claim challenge issued before the range's difficulty rose (409 claim_challenge_stale, nothing spent); a new one claims", async () => {
    // Every creation from a range raises its difficulty by a bit (no free creations), so the test can raise it.
    p = await startProvider({ admission: { baseDifficulty: 8, maxDifficulty: 16, freeCreationsPerSource: 0 } });
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const code = str(
      (await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth })).json(),
      "claim_code",
    );
    const s = await claimSession();
    const old = await claimChallenge(s, code);
    await createSandbox(p); // the range's difficulty rises by one bit
    const nonce = solve(old.c, old.d);
    const stale = await p.req("admin.localhost", "POST", "/claim/verify", {
      json: { code, csrf: s.csrf, challenge: old.c, nonce },
      headers: { cookie: s.cookie },
    });
    // The old code claimed with it: the difficulty was checked only against the one the challenge states.
    expect(stale.status).toBe(409);
    expect(str(stale.json(), "error.code")).toBe("claim_challenge_stale");
    expect(str(stale.json(), "error.message")).toBe(
      `the proof-of-work difficulty has risen to ${old.d + 1} since this challenge was issued: get a new challenge`,
    );
    expect((await p.server.store.sandbox(a.id))?.state).toBe("published");
    const fresh = await humanClaim(p, code);
    expect(fresh.verify.status).toBe(200);
    expect((await p.server.store.sandbox(a.id))?.state).toBe("claimed");
  });

  it("a stale answer comes only for a valid proof: a wrong nonce for an old challenge is the one failure answer", async () => {
    p = await startProvider({ admission: { baseDifficulty: 8, maxDifficulty: 16, freeCreationsPerSource: 0 } });
    await createSandbox(p);
    const s = await claimSession();
    const old = await claimChallenge(s, "ACP-AAAA-AAAA-AAAA-AAAA");
    await createSandbox(p);
    const r = await p.req("admin.localhost", "POST", "/claim/verify", {
      json: { code: "ACP-AAAA-AAAA-AAAA-AAAA", csrf: s.csrf, challenge: old.c, nonce: "x" },
      headers: { cookie: s.cookie },
    });
    expect(r.status).toBe(404);
    expect(r.body).toBe(FAILURE_BODY);
  });

  it("the difficulty is signed into the challenge: one rewritten to a lower difficulty, solved at it, is the failure answer", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const code = str(
      (await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth })).json(),
      "claim_code",
    );
    const s = await claimSession();
    const issued = await claimChallenge(s, code);
    const lowered = issued.c.replace(/^v1-\d+-/, "v1-1-");
    expect(lowered).not.toBe(issued.c);
    const r = await p.req("admin.localhost", "POST", "/claim/verify", {
      json: { code, csrf: s.csrf, challenge: lowered, nonce: solve(lowered, 1) },
      headers: { cookie: s.cookie },
    });
    expect(r.status).toBe(404);
    expect(r.body).toBe(FAILURE_BODY);
    expect((await p.server.store.sandbox(a.id))?.state).toBe("published");
  });
});
