import { createPublicKey, randomBytes, sign } from "node:crypto";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  ClaimClient,
  FAILURE_BODY,
  newIssuerKey,
  signAdmissionToken,
  verifyAdmissionToken,
  type IssuerKey,
  type TokenRequest,
} from "../src/index.js";
import { at, num, shape, solve, str, startProvider, type Provider, type Res } from "./harness.js";

let p: Provider;
afterEach(async () => p?.close());

const T0 = Date.parse("2026-03-01T12:00:00Z");
const issuer = newIssuerKey();
const trusted = [{ kid: issuer.kid, publicKey: issuer.publicKey, name: "Test registry" }];

/** A token for `p` (audience = its API origin) unless overridden. */
const token = (over: Partial<TokenRequest> = {}, key: IssuerKey = issuer): string =>
  signAdmissionToken(key, {
    subject: "agent-42",
    audience: `http://api.localhost:${p.port}`,
    nowMs: T0,
    ttlMs: 3_600_000,
    jti: randomBytes(16).toString("hex"),
    ...over,
  });

const hdr = (t: string | undefined): Record<string, string> => (t === undefined ? {} : { "acp-admission-token": t });

async function challenge(t?: string, from?: string): Promise<Res> {
  return p.req("api.localhost", "GET", "/v1/sandboxes/challenge", {
    headers: hdr(t),
    ...(from === undefined ? {} : { from }),
  });
}

async function create(c: Res, t?: string): Promise<Res> {
  const ch = str(c.json(), "challenge");
  return p.req("api.localhost", "POST", "/v1/sandboxes", {
    json: { admission: { type: "proof_of_work", challenge: ch, nonce: solve(ch, num(c.json(), "difficulty")) } },
    headers: hdr(t),
  });
}

describe("§11.2 issuer-attested admission beside the proof-of-work (black box, over HTTP)", () => {
  it("MUST §11.2 a valid token from a trusted issuer admits, at a lower difficulty; discovery advertises it", async () => {
    p = await startProvider({
      admission: { baseDifficulty: 10, maxDifficulty: 16 },
      admissionPolicy: { issuers: trusted },
    });
    const d = (await p.req("api.localhost", "GET", "/.well-known/agent-access")).json();
    expect(at(d, "sandbox.admission")).toEqual(["proof_of_work", "issuer_token"]);
    expect(at(d, "admission.mode")).toBe("pow+reputation");
    expect(at(d, "admission.issuer_token")).toBe("optional");
    expect(at(d, "admission.token_header")).toBe("ACP-Admission-Token");
    expect(at(d, "admission.token_audience")).toEqual([`http://api.localhost:${p.port}`]);
    expect(at(d, "admission.issuers")).toEqual([{ kid: issuer.kid, name: "Test registry" }]);
    expect(at(d, "admission.reputation.persistent")).toBe(true);

    expect(num((await challenge()).json(), "difficulty")).toBe(10);
    const t = token();
    const c = await challenge(t);
    expect(num(c.json(), "difficulty")).toBe(6);
    expect((await create(c, t)).status).toBe(201);
  });

  it("MUST §11.2 forged, tampered, unknown-issuer, expired, not-yet-valid, wrong-audience and reused tokens are refused, all with the one failure answer", async () => {
    p = await startProvider({ admissionPolicy: { issuers: trusted } });
    const other = newIssuerKey();
    const forged = token({}, { ...other, kid: issuer.kid });
    const [h = "", , sig = ""] = token().split(".");
    const tampered = `${h}.${Buffer.from(JSON.stringify({ iss: issuer.kid, sub: "root", aud: `http://api.localhost:${p.port}`, exp: T0 / 1000 + 3600, jti: "x".repeat(32) })).toString("base64url")}.${sig}`;
    const unknown = token({}, other);
    const expired = token({ nowMs: T0 - 2 * 3_600_000 });
    const future = token({ nowMs: T0 + 3_600_000 });
    const wrongAud = token({ audience: "https://api.other.example" });
    const tooLong = token({ ttlMs: 31 * 86_400_000 });
    const used = token();
    const twice = [await challenge(used), await challenge(used)];
    expect((await create(twice[0]!, used)).status).toBe(201);

    const refused: Res[] = [];
    for (const t of [forged, tampered, unknown, expired, future, wrongAud, tooLong, "not.a.token", used])
      refused.push(await challenge(t));
    // A challenge fetched before the token was used up does not help: the use is spent atomically at creation.
    refused.push(await create(twice[1]!, used));
    // A challenge fetched with a token is bound to it: it admits nothing without that token, or with another one.
    const bound = await challenge(token());
    refused.push(await create(bound));
    refused.push(await create(bound, token()));
    for (const r of refused) {
      expect(r.body).toBe(FAILURE_BODY);
      expect(shape(r)).toEqual(shape(refused[0]!));
    }
  });

  it("MUST §11.2 a token with max_uses admits exactly that many sandboxes", async () => {
    p = await startProvider({ admissionPolicy: { issuers: trusted } });
    const t = token({ maxUses: 2 });
    const cs = [await challenge(t), await challenge(t), await challenge(t)];
    expect((await create(cs[0]!, t)).status).toBe(201);
    expect((await create(cs[1]!, t)).status).toBe(201);
    expect((await create(cs[2]!, t)).body).toBe(FAILURE_BODY);
  });

  it("MUST §11.2 issuer-required: without a token the challenge and the creation are refused with the one failure answer; with one it admits", async () => {
    p = await startProvider({ admissionPolicy: { mode: "issuer-required", issuers: trusted } });
    const d = (await p.req("api.localhost", "GET", "/.well-known/agent-access")).json();
    expect(at(d, "admission.issuer_token")).toBe("required");
    const noToken = await challenge();
    const forged = await challenge(token({}, newIssuerKey()));
    const blind = await p.req("api.localhost", "POST", "/v1/sandboxes", {
      json: { admission: { type: "proof_of_work", challenge: "v1-8-1-x", nonce: "0" } },
    });
    for (const r of [noToken, forged, blind]) expect(r.body).toBe(FAILURE_BODY);
    expect(shape(noToken)).toEqual(shape(forged));
    // An anonymous challenge from before the switch (or minted elsewhere) cannot be used either: it must be bound.
    const t = token();
    const c = await challenge(t);
    expect(c.status).toBe(200);
    expect((await create(c)).body).toBe(FAILURE_BODY);
    expect((await create(await challenge(t), t)).status).toBe(201);
  });

  it("a token whose exp has a fraction of a second (a NumericDate may, RFC 7519) admits once, not a 500 (the store keeps whole milliseconds)", async () => {
    p = await startProvider({ admissionPolicy: { issuers: trusted } });
    const b64u = (v: string | Buffer): string => Buffer.from(v).toString("base64url");
    const h = b64u(JSON.stringify({ typ: "acp-admission+jwt", alg: "EdDSA", kid: issuer.kid }));
    const claims = {
      iss: issuer.kid,
      sub: "agent-7",
      aud: `http://api.localhost:${p.port}`,
      iat: T0 / 1000 + 0.25,
      exp: T0 / 1000 + 3600.0005,
      jti: randomBytes(16).toString("hex"),
    };
    const body = b64u(JSON.stringify(claims));
    const t = `${h}.${body}.${b64u(sign(null, Buffer.from(`${h}.${body}`), { key: issuer.privateJwk, format: "jwk" }))}`;
    const first = await create(await challenge(t), t);
    expect(first.status).toBe(201);
    // Single use: spent in the store, so the next challenge for it is refused.
    expect((await challenge(t)).body).toBe(FAILURE_BODY);
  });

  it("refuses to start in issuer-required mode without a trusted issuer, and on a key that is not Ed25519", async () => {
    await expect(startProvider({ admissionPolicy: { mode: "issuer-required" } })).rejects.toThrow(/issuer/);
    await expect(startProvider({ admissionPolicy: { issuers: [{ kid: "k", publicKey: "short" }] } })).rejects.toThrow(
      /public_key/,
    );
  });
});

describe("the TypeScript client with an admission token", () => {
  const clientFor = (q: Provider, admissionToken?: string): ClaimClient => {
    const transport = (method: string, url: string, headers: Record<string, string>, body: string | undefined) =>
      q.req(new URL(url).hostname, method, new URL(url).pathname, {
        headers,
        ...(body === undefined ? {} : { json: JSON.parse(body) as unknown }),
      });
    return new ClaimClient(`http://api.localhost:${q.port}`, {
      solve: { workers: 0 },
      transport,
      ...(admissionToken === undefined ? {} : { admissionToken }),
    });
  };

  it("sends it on the challenge and the creation; without one an issuer-required provider's refusal is explained", async () => {
    p = await startProvider({
      now: () => Date.now(),
      admissionPolicy: { mode: "issuer-required", issuers: trusted },
    });
    const t = token({ nowMs: Date.now() });
    const made = await clientFor(p, t).createSandbox();
    expect(made.id).toMatch(/^sbx_/);
    await expect(clientFor(p, t).createSandbox()).rejects.toMatchObject({ status: 404, code: "not_found" });
    await expect(clientFor(p).createSandbox()).rejects.toMatchObject({ code: "claim_unsupported" });
  });

  it("does not send a token to a provider whose discovery does not accept tokens", async () => {
    p = await startProvider();
    await expect(clientFor(p, token()).createSandbox()).rejects.toMatchObject({ code: "claim_unsupported" });
  });
});

describe("verifyAdmissionToken on hostile input", () => {
  const keys = new Map([
    [issuer.kid, createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: issuer.publicKey }, format: "jwk" })],
  ]);
  const opts = { issuers: keys, audience: ["https://api.example.com"], nowMs: T0, maxLifetimeMs: 30 * 86_400_000 };
  const good = signAdmissionToken(issuer, {
    subject: "agent-1",
    audience: "https://api.example.com",
    nowMs: T0,
    ttlMs: 3_600_000,
    jti: "j".repeat(32),
  });

  it("any single-character change is refused, or decodes to the very same statement (uses are keyed by issuer + jti, not by the text) (property)", () => {
    const original = verifyAdmissionToken(good, opts);
    expect(original.ok).toBe(true);
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ";
    fc.assert(
      fc.property(fc.nat(good.length - 1), fc.nat(alphabet.length - 1), (i, c) => {
        const mutated = good.slice(0, i) + alphabet[c]! + good.slice(i + 1);
        const r = verifyAdmissionToken(mutated, opts);
        if (r.ok) expect(r).toEqual(original);
      }),
      { numRuns: 2000 },
    );
  });

  it("never throws on arbitrary text (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 600 }), (t) => {
        expect(verifyAdmissionToken(t, opts).ok).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});
