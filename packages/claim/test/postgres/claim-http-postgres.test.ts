import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../store/test/postgres/test-database.js";
import { FAILURE_BODY, openClaimPostgres } from "../../src/index.js";
import { at, createSandbox, humanClaim, num, publishFaq, startProvider, str, type Provider } from "../harness.js";

let p: Provider | undefined;
let q: Provider | undefined;
let db: TestDatabase | undefined;
afterEach(async () => {
  await p?.close(); // closes the PostgreSQL pool too
  await q?.close();
  q = undefined;
  await db?.drop();
});

describe("the provider on PostgreSQL (storage through the same store interface), over real HTTP", () => {
  it("Appendix A flow: create → FAQ → publish (handle rotates) → claim code → human claim → workspace", async () => {
    db = await createTestDatabase();
    p = await startProvider({ postgres: await openClaimPostgres(db.url) });
    const a = await createSandbox(p);
    const { pub } = await publishFaq(p, a);
    expect(at(pub, "handle_rotated")).toBe(true);
    const published = `${str(pub, "new_handle")}.pub.localhost`;
    expect((await p.req(published, "GET", "/acme-help")).status).toBe(200);
    expect((await p.req(`${a.handle}.pub.localhost`, "GET", "/acme-help")).body).toBe(FAILURE_BODY);

    const cl = await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth });
    const code = str(cl.json(), "claim_code");
    const { verify, cookie } = await humanClaim(p, code);
    expect(verify.status).toBe(200);
    expect(at(verify.json(), "status")).toBe("claimed");
    expect((await p.req("admin.localhost", "GET", "/workspace", { headers: { cookie } })).status).toBe(200);
    // §19.4: the agent token and the published handle are dead; the code is single use.
    const after = await p.req("api.localhost", "GET", `/v1/sandboxes/${a.id}`, { headers: a.auth });
    expect(after.body).toBe(FAILURE_BODY);
    expect((await p.req(published, "GET", "/acme-help")).body).toBe(FAILURE_BODY);
    expect((await humanClaim(p, code)).verify.status).not.toBe(200);
  });

  it("two humans racing the same claim code over HTTP: exactly one owns the sandbox", async () => {
    db = await createTestDatabase();
    p = await startProvider({ postgres: await openClaimPostgres(db.url) });
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const cl = await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth });
    const code = str(cl.json(), "claim_code");
    const provider = p;
    const results = await Promise.all([humanClaim(provider, code), humanClaim(provider, code)]);
    expect(results.map((r) => r.verify.status).sort()).toEqual([200, 404]);
  });

  it("MUST §11.2 reputation is shared by every node on one database and survives them: a source flagged on node A is slower on node B, then after both restart", async () => {
    db = await createTestDatabase();
    const key = randomBytes(32);
    const opts = { admission: { baseDifficulty: 6, maxDifficulty: 20 }, key };
    p = await startProvider({ ...opts, postgres: await openClaimPostgres(db.url) });
    q = await startProvider({ ...opts, postgres: await openClaimPostgres(db.url) });
    const a = await createSandbox(p);
    const f = await p.req("api.localhost", "POST", "/v1/faqs", {
      json: { title: "Login", questions: [{ question: "How?", answer: "Enter your password here." }] },
      headers: a.auth,
    });
    const pub = await p.req("api.localhost", "POST", `/v1/faqs/${str(f.json(), "faq_id")}/publish`, {
      headers: a.auth,
    });
    expect(pub.status).toBe(422);
    const difficulty = async (node: Provider): Promise<number> =>
      num((await node.req("api.localhost", "GET", "/v1/sandboxes/challenge")).json(), "difficulty");
    expect(await difficulty(q)).toBe(6 + 2); // node B never saw the flag: only the stored 30 points
    await p.close();
    await q.close();
    q = undefined;
    p = await startProvider({ ...opts, postgres: await openClaimPostgres(db.url) });
    expect(await difficulty(p)).toBe(6 + 2);
  });
});
