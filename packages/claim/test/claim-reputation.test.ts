import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStateDb } from "@acp/store";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  FAILURE_BODY,
  ReputationPolicy,
  decayScore,
  newIssuerKey,
  signAdmissionToken,
  type ClaimServerOptions,
} from "../src/index.js";
import {
  createSandbox,
  humanClaim,
  num,
  publishFaq,
  shape,
  solve,
  str,
  startProvider,
  type Agent,
  type Provider,
} from "./harness.js";

let p: Provider | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

const HOUR = 3_600_000;
const T0 = Date.parse("2026-03-01T12:00:00Z");
const OTHER = "127.0.1.1";
const PHISHING = {
  title: "Account help",
  questions: [{ question: "How do I log in?", answer: "Enter your password here." }],
};

async function difficulty(q: Provider, from?: string, headers: Record<string, string> = {}): Promise<number> {
  const r = await q.req("api.localhost", "GET", "/v1/sandboxes/challenge", {
    headers,
    ...(from === undefined ? {} : { from }),
  });
  expect(r.status).toBe(200);
  return num(r.json(), "difficulty");
}

/** A sandbox whose publication the content scan flags (charging its source's reputation). */
async function flag(q: Provider, a?: Agent): Promise<void> {
  const agent = a ?? (await createSandbox(q));
  const json = { ...PHISHING, slug: `help-${randomBytes(4).toString("hex")}` };
  const f = await q.req("api.localhost", "POST", "/v1/faqs", { json, headers: agent.auth });
  const pub = await q.req("api.localhost", "POST", `/v1/faqs/${str(f.json(), "faq_id")}/publish`, {
    headers: agent.auth,
  });
  expect(pub.status).toBe(422);
}

const base: Partial<ClaimServerOptions> = { admission: { baseDifficulty: 6, maxDifficulty: 20 } };

describe("§11.2 persistent per-source reputation (black box, over HTTP)", () => {
  it("MUST §11.2 reputation persists across a provider restart: flagged content keeps raising that source's difficulty, other sources are untouched", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "acp-claim-rep-")), "state.db");
    const key = randomBytes(32);
    const db1 = openStateDb(path);
    p = await startProvider({ ...base, db: db1, key });
    await flag(p);
    await flag(p);
    const raised = await difficulty(p);
    await p.close();
    db1.close();

    // A new process: the in-memory throttling is gone, the stored score is not.
    const db2 = openStateDb(path);
    p = await startProvider({ ...base, db: db2, key });
    // 60 points (2 flags × 30): +3 bits; the in-memory surcharge (+2 per flag for an hour) is gone.
    expect(await difficulty(p)).toBe(6 + 3);
    expect(raised).toBeGreaterThan(6 + 3);
    expect(await difficulty(p, OTHER)).toBe(6);
    await p.close();
    p = undefined;
    db2.close();
  });

  it("MUST §11.2 a bad score refuses admission from that source for a period (the same 429 at challenge and creation), then decays over days", async () => {
    p = await startProvider({ ...base, admissionPolicy: { reputation: { refuseAt: 80 } } });
    const early = await p.req("api.localhost", "GET", "/v1/sandboxes/challenge");
    for (let i = 0; i < 3; i++) await flag(p); // 90 points ≥ 80
    const refused = await p.req("api.localhost", "GET", "/v1/sandboxes/challenge");
    expect(refused.status).toBe(429);
    expect(str(refused.json(), "error.code")).toBe("claim_rate_limited");
    // Until the score halves below 80: 72 h × log2(90/80) ≈ 12.2 h.
    const retry = Number(refused.headers["retry-after"]);
    expect(retry).toBeGreaterThan(12 * 3600);
    expect(retry).toBeLessThan(13 * 3600);
    const c = early.json();
    const late = await p.req("api.localhost", "POST", "/v1/sandboxes", {
      json: {
        admission: {
          type: "proof_of_work",
          challenge: str(c, "challenge"),
          nonce: solve(str(c, "challenge"), num(c, "difficulty")),
        },
      },
    });
    expect(late.status).toBe(429);
    expect(shape(late)).toEqual(shape(refused));
    expect(await difficulty(p, OTHER)).toBe(6);

    p.advance(13 * HOUR); // admitted again, still at a raised difficulty (score ≈ 79: +3 bits)
    expect(await difficulty(p)).toBe(6 + 3);
    p.advance(7 * 24 * HOUR); // a week later: ≈ 15 points, +1 bit
    expect(await difficulty(p)).toBe(6 + 1);
    p.advance(7 * 24 * HOUR);
    expect(await difficulty(p)).toBe(6);
  });

  it("MUST §11.2 sandboxes abandoned unclaimed charge the source that created them; deleted and claimed ones do not", async () => {
    const rep = { admissionPolicy: { reputation: { points: { abandoned: 10 } } } };
    p = await startProvider({ ...base, ...rep });
    const deleted = await createSandbox(p, OTHER);
    const claimed = await createSandbox(p, OTHER);
    await publishFaq(p, claimed);
    const code = await p.req("api.localhost", "POST", `/v1/sandboxes/${claimed.id}/claim`, { headers: claimed.auth });
    expect((await humanClaim(p, str(code.json(), "claim_code"))).verify.status).toBe(200);
    expect(
      (await p.req("api.localhost", "DELETE", `/v1/sandboxes/${deleted.id}`, { headers: deleted.auth })).status,
    ).toBe(204);
    await createSandbox(p);
    await createSandbox(p);
    p.advance(48 * HOUR + 1000); // the next request sweeps: two abandoned sandboxes from 127.0.0.1
    expect(await difficulty(p)).toBe(6 + 2); // 20 points
    expect(await difficulty(p, OTHER)).toBe(6);
  });

  it("MUST §11.2 / §10 lockouts charge only the caller's range, the same for a real code and an unknown one (no oracle)", async () => {
    p = await startProvider({ ...base, claimPerIpPerHour: 1000, claimPerCodePerHour: 1000 });
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const code = str(
      (await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth })).json(),
      "claim_code",
    );
    // From 127.0.0.1: a real code with a wrong nonce; from OTHER: unknown codes with a right nonce.
    const page = async (from?: string): Promise<{ cookie: string; csrf: string }> => {
      const r = await p!.req("admin.localhost", "GET", "/claim", from === undefined ? {} : { from });
      return {
        cookie: String(r.headers["set-cookie"]).split(";")[0] ?? "",
        csrf: /name="csrf" value="([^"]+)"/.exec(r.body)?.[1] ?? "",
      };
    };
    const fail = async (typed: string, solveIt: boolean, from?: string): Promise<number> => {
      const s = await page(from);
      const opt = { headers: { cookie: s.cookie }, ...(from === undefined ? {} : { from }) };
      const ch = (
        await p!.req("admin.localhost", "POST", "/claim/challenge", { json: { code: typed, csrf: s.csrf }, ...opt })
      ).json();
      const nonce = solveIt ? solve(str(ch, "challenge"), num(ch, "difficulty")) : "-";
      return (
        await p!.req("admin.localhost", "POST", "/claim/verify", {
          json: { code: typed, csrf: s.csrf, challenge: str(ch, "challenge"), nonce },
          ...opt,
        })
      ).status;
    };
    for (let i = 0; i < 6; i++) expect(await fail(code, false)).toBe(404);
    for (let i = 0; i < 6; i++) expect(await fail(`ACP-ZZZZ-ZZZZ-ZZZZ-ZZZ${i}`, true, OTHER)).toBe(404);
    p.advance(HOUR); // the in-memory failure counters are gone; the lockout charge (15 points) is not
    expect(await difficulty(p)).toBe(6 + 1);
    expect(await difficulty(p, OTHER)).toBe(6 + 1);
  });

  it("MUST §11.2 reputation follows an issuer subject across addresses: its flagged sandbox raises, then refuses, that subject's tokens", async () => {
    const issuer = newIssuerKey();
    p = await startProvider({
      ...base,
      admissionPolicy: {
        issuers: [{ kid: issuer.kid, publicKey: issuer.publicKey }],
        tokenDiscountBits: 2,
        reputation: { refuseAt: 50 },
      },
    });
    const port = p.port;
    const token = (subject: string): Record<string, string> => ({
      "acp-admission-token": signAdmissionToken(issuer, {
        subject,
        audience: `http://api.localhost:${port}`,
        nowMs: T0,
        ttlMs: HOUR,
        jti: randomBytes(16).toString("hex"),
      }),
    });
    const t = token("agent-7");
    const c = (await p.req("api.localhost", "GET", "/v1/sandboxes/challenge", { headers: t })).json();
    expect(num(c, "difficulty")).toBe(4);
    const made = await p.req("api.localhost", "POST", "/v1/sandboxes", {
      json: {
        admission: { type: "proof_of_work", challenge: str(c, "challenge"), nonce: solve(str(c, "challenge"), 4) },
      },
      headers: t,
    });
    const agent: Agent = {
      id: str(made.json(), "id"),
      token: str(made.json(), "agent_token.token"),
      handle: "",
      auth: { authorization: `Bearer ${str(made.json(), "agent_token.token")}` },
      created: made.json(),
    };
    await flag(p, agent); // charges 127.0.0.1 and subject agent-7: 30 points each
    // From a clean address, the subject's score still counts: 6 + 2 (30 points) − 2 (token).
    expect(await difficulty(p, OTHER, token("agent-7"))).toBe(6);
    expect(await difficulty(p, OTHER, token("agent-8"))).toBe(4);
    await flag(p, agent); // 60 ≥ 50: agent-7 is refused wherever it comes from
    const refused = await p.req("api.localhost", "GET", "/v1/sandboxes/challenge", {
      headers: token("agent-7"),
      from: OTHER,
    });
    expect(refused.status).toBe(429);
    expect(await difficulty(p, OTHER, token("agent-8"))).toBe(4);
  });

  it("an error while deciding admission (the store unreachable) refuses with the one failure answer, never admits", async () => {
    p = await startProvider(base);
    expect(await difficulty(p)).toBe(6);
    p.db.close();
    const r = await p.req("api.localhost", "GET", "/v1/sandboxes/challenge");
    expect(r.body).toBe(FAILURE_BODY);
  });
});

describe("ReputationPolicy", () => {
  it("more score never costs fewer bits; refusal starts at refuse_at and lasts exactly until the score has decayed below it (property)", () => {
    const rep = new ReputationPolicy();
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        (a, b) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          expect(rep.extraBits(lo)).toBeLessThanOrEqual(rep.extraBits(hi));
          const ms = rep.refusedForMs(hi);
          expect(ms > 0).toBe(hi >= rep.refuseAt);
          if (ms > 0) {
            expect(decayScore(hi, 0, ms, rep.halfLifeMs)).toBeLessThan(rep.refuseAt);
            if (ms > 2)
              expect(decayScore(hi, 0, ms - 2, rep.halfLifeMs)).toBeGreaterThanOrEqual(rep.refuseAt * 0.999999);
          }
        },
      ),
      { numRuns: 1000 },
    );
    expect([0, 9.99, 10, 19.99, 20, 40, 160].map((x) => rep.extraBits(x))).toEqual([0, 0, 1, 1, 2, 3, 5]);
  });
});
