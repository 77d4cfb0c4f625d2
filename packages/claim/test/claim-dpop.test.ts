import { afterEach, describe, expect, it } from "vitest";
import { ClaimClient, FAILURE_BODY } from "../src/index.js";
import { dpopProof, newDpopKey, type DpopKey } from "../src/secrets/dpop.js";
import { at, num, solve, startProvider, str, type Provider } from "./harness.js";

let p: Provider | undefined;
afterEach(async () => p?.close());

const T = Date.parse("2026-03-01T12:00:00Z"); // the harness clock

/** Creates a sandbox with a DPoP proof by `key`; the raw creation answer. */
async function createBound(pr: Provider, key: DpopKey, proof?: string) {
  const c = (await pr.req("api.localhost", "GET", "/v1/sandboxes/challenge")).json();
  const url = `http://api.localhost:${pr.port}/v1/sandboxes`;
  return pr.req("api.localhost", "POST", "/v1/sandboxes", {
    json: {
      admission: {
        type: "proof_of_work",
        challenge: str(c, "challenge"),
        nonce: solve(str(c, "challenge"), num(c, "difficulty")),
      },
    },
    headers: { dpop: proof ?? dpopProof(key, "POST", url, T) },
  });
}

describe("SHOULD §20.1 DPoP proof-of-possession for agent tokens (RFC 9449)", () => {
  it("a token created with a DPoP proof works only with fresh proofs by the same key, never as a bearer token", async () => {
    p = await startProvider();
    const key = newDpopKey();
    const made = await createBound(p, key);
    expect(made.status).toBe(201);
    expect(at(made.json(), "agent_token.token_type")).toBe("DPoP");
    const id = str(made.json(), "id");
    const token = str(made.json(), "agent_token.token");
    const path = `/v1/sandboxes/${id}`;
    const url = `http://api.localhost:${p.port}${path}`;
    const proof = dpopProof(key, "GET", url, T, token);
    const ok = await p.req("api.localhost", "GET", path, { headers: { authorization: `DPoP ${token}`, dpop: proof } });
    expect(ok.status).toBe(200);
    const attempts = [
      // the same token as a bearer token (a leaked token alone)
      { authorization: `Bearer ${token}` },
      // a replayed proof (same jti)
      { authorization: `DPoP ${token}`, dpop: proof },
      // a proof by another key
      { authorization: `DPoP ${token}`, dpop: dpopProof(newDpopKey(), "GET", url, T, token) },
      // a proof for another method, another URL, or too old
      { authorization: `DPoP ${token}`, dpop: dpopProof(key, "DELETE", url, T, token) },
      { authorization: `DPoP ${token}`, dpop: dpopProof(key, "GET", `${url}/preview`, T, token) },
      { authorization: `DPoP ${token}`, dpop: dpopProof(key, "GET", url, T - 120_000, token) },
      // no proof, or garbage
      { authorization: `DPoP ${token}` },
      { authorization: `DPoP ${token}`, dpop: "a.b.c" },
    ];
    for (const headers of attempts) {
      const r = await p.req("api.localhost", "GET", path, { headers });
      expect(r.status).toBe(404);
      expect(r.body).toBe(FAILURE_BODY);
    }
  });

  it("RFC 9449 §4.3: a proof carries ath, the hash of the token it comes with; without it, or for another token of its key, it is refused", async () => {
    p = await startProvider();
    const key = newDpopKey();
    // Two sandboxes bound to one key: a proof made for one token must not serve the other.
    const [a, b] = [await createBound(p, key), await createBound(p, key)].map((r) => ({
      id: str(r.json(), "id"),
      token: str(r.json(), "agent_token.token"),
    })) as [{ id: string; token: string }, { id: string; token: string }];
    const path = `/v1/sandboxes/${b.id}`;
    const url = `http://api.localhost:${p.port}${path}`;
    const auth = { authorization: `DPoP ${b.token}` };
    for (const dpop of [dpopProof(key, "GET", url, T), dpopProof(key, "GET", url, T, a.token)]) {
      const r = await p.req("api.localhost", "GET", path, { headers: { ...auth, dpop } });
      expect(r.status).toBe(404);
      expect(r.body).toBe(FAILURE_BODY);
    }
    const ok = await p.req("api.localhost", "GET", path, {
      headers: { ...auth, dpop: dpopProof(key, "GET", url, T, b.token) },
    });
    expect(ok.status).toBe(200);
  });

  it("a proof dated 60 s ahead is refused when replayed at the last moment it is still valid (120 s after its use)", async () => {
    // Proofs are good for ±60 s around their iat, so one dated 60 s ahead is good for 120 s; its id was remembered
    // exactly 120 s, so at that very millisecond it was valid again, and forgotten by the cache and the store's sweep.
    p = await startProvider();
    const key = newDpopKey();
    const made = await createBound(p, key);
    const id = str(made.json(), "id");
    const token = str(made.json(), "agent_token.token");
    const path = `/v1/sandboxes/${id}`;
    const proof = dpopProof(key, "GET", `http://api.localhost:${p.port}${path}`, T + 60_000, token);
    const headers = { authorization: `DPoP ${token}`, dpop: proof };
    expect((await p.req("api.localhost", "GET", path, { headers })).status).toBe(200);
    p.advance(120_000);
    const replay = await p.req("api.localhost", "GET", path, { headers });
    expect(replay.status).toBe(404);
    expect(replay.body).toBe(FAILURE_BODY);
    // One millisecond later the proof has expired (and its id may go).
    p.advance(1);
    expect((await p.req("api.localhost", "GET", path, { headers })).status).toBe(404);
    // A fresh proof still works.
    const fresh = dpopProof(key, "GET", `http://api.localhost:${p.port}${path}`, T + 120_001, token);
    expect((await p.req("api.localhost", "GET", path, { headers: { ...headers, dpop: fresh } })).status).toBe(200);
  });

  it("an invalid DPoP proof at creation is refused with claim_invalid_dpop and creates nothing", async () => {
    p = await startProvider();
    const key = newDpopKey();
    const wrongUrl = dpopProof(key, "POST", "http://elsewhere.example/v1/sandboxes", T);
    const r = await createBound(p, key, wrongUrl);
    expect(r.status).toBe(400);
    expect(at(r.json(), "error.code")).toBe("claim_invalid_dpop");
    const withPrivateKey = await createBound(
      p,
      key,
      `${Buffer.from(JSON.stringify({ typ: "dpop+jwt", alg: "EdDSA", jwk: key.privateJwk })).toString("base64url")}.e30.AA`,
    );
    expect(withPrivateKey.status).toBe(400);
  });

  it("a proof is spent by a creation that fails; sent again it is refused saying it was used and to sign a new one, and a new one creates", async () => {
    p = await startProvider();
    const key = newDpopKey();
    const url = `http://api.localhost:${p.port}/v1/sandboxes`;
    // A challenge already spent by another creation: the creation with it fails (the one failure answer).
    const c = (await p.req("api.localhost", "GET", "/v1/sandboxes/challenge")).json();
    const admission = {
      type: "proof_of_work",
      challenge: str(c, "challenge"),
      nonce: solve(str(c, "challenge"), num(c, "difficulty")),
    };
    expect((await p.req("api.localhost", "POST", "/v1/sandboxes", { json: { admission } })).status).toBe(201);
    const proof = dpopProof(key, "POST", url, T);
    const failed = await p.req("api.localhost", "POST", "/v1/sandboxes", {
      json: { admission },
      headers: { dpop: proof },
    });
    expect(failed.body).toBe(FAILURE_BODY);
    // The same proof with a good challenge: refused, and the message says why and what to do (the old one blamed
    // the proof's form: "not valid (typ, alg, …)").
    const again = await createBound(p, key, proof);
    expect(again.status).toBe(400);
    expect(at(again.json(), "error.code")).toBe("claim_invalid_dpop");
    expect(at(again.json(), "error.message")).toBe(
      "the DPoP proof was already used: a proof is good for one request, a refused or failed one included; sign a new proof (a new jti) for every request, retries too",
    );
    const fresh = await createBound(p, key);
    expect(fresh.status).toBe(201);
    expect(at(fresh.json(), "agent_token.token_type")).toBe("DPoP");
  });

  it("without a proof the token is a bearer token as before; discovery advertises DPoP", async () => {
    p = await startProvider();
    const d = (await p.req("api.localhost", "GET", "/.well-known/agent-access")).json();
    expect(at(d, "agent_token.token_types")).toEqual(["Bearer", "DPoP"]);
    expect(at(d, "agent_token.dpop_signing_alg_values_supported")).toEqual(["EdDSA", "ES256"]);
  });

  it("the TypeScript client binds its token with DPoP by default and goes from sandbox to claim link", async () => {
    p = await startProvider({ now: () => Date.now() });
    const transport = (method: string, url: string, headers: Record<string, string>, body: string | undefined) =>
      p!.req(new URL(url).hostname, method, new URL(url).pathname, {
        headers,
        ...(body === undefined ? {} : { json: JSON.parse(body) as unknown }),
      });
    const client = new ClaimClient(`http://api.localhost:${p.port}`, { solve: { workers: 0 }, transport });
    const pub = await client.publishFaq({ title: "DPoP FAQ", questions: [{ question: "Bound?", answer: "Yes." }] });
    expect(pub.sandbox.dpop_key?.kty).toBe("OKP");
    const link = await client.claimLink(pub.sandbox);
    expect(link.claim_code).toMatch(/^ACP-/);
    // The token without its key is refused.
    const plain = new ClaimClient(`http://api.localhost:${p.port}`, { transport, dpop: false });
    const { dpop_key: _k, ...stolen } = pub.sandbox;
    void _k;
    await expect(plain.claimLink(stolen)).rejects.toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("DPoP proofs sent with unknown tokens", () => {
  it("are refused with the one failure answer and write nothing to the store; with the token the proof is spent once", async () => {
    p = await startProvider();
    const key = newDpopKey();
    const made = await createBound(p, key);
    const id = str(made.json(), "id");
    const token = str(made.json(), "agent_token.token");
    const path = `/v1/sandboxes/${id}`;
    const url = `http://api.localhost:${p.port}${path}`;
    const spent = (): number =>
      (p!.db.prepare("SELECT count(*) AS n FROM claim_spent_challenges").get() as { n: number }).n;
    const before = spent();
    for (let i = 0; i < 5; i++) {
      const r = await p.req("api.localhost", "GET", path, {
        headers: { authorization: `DPoP ${"x".repeat(43)}${i}`, dpop: dpopProof(newDpopKey(), "GET", url, T) },
      });
      expect(r.body).toBe(FAILURE_BODY);
    }
    // A valid proof by the right key with a wrong token is refused too, and stays unspent: with the token it works.
    const proof = dpopProof(key, "GET", url, T, token);
    const wrong = await p.req("api.localhost", "GET", path, {
      headers: { authorization: `DPoP ${"y".repeat(43)}`, dpop: proof },
    });
    expect(wrong.body).toBe(FAILURE_BODY);
    expect(spent()).toBe(before);
    const ok = await p.req("api.localhost", "GET", path, { headers: { authorization: `DPoP ${token}`, dpop: proof } });
    expect(ok.status).toBe(200);
    expect(spent()).toBe(before + 1);
    const replay = await p.req("api.localhost", "GET", path, {
      headers: { authorization: `DPoP ${token}`, dpop: proof },
    });
    expect(replay.body).toBe(FAILURE_BODY);
  });
});
