import { afterEach, describe, expect, it } from "vitest";
import { FAILURE_BODY, IDENTIFIER_ENTROPY_BITS, newClaimCode, newPublicHandle } from "../src/index.js";
import { at, createSandbox, humanClaim, publishFaq, shape, str, startProvider, type Provider } from "./harness.js";

let p: Provider;
afterEach(async () => p?.close());

describe("§12 / §27 / App. B Identifiers", () => {
  it("MUST §12.1 / App. B: public handles ≥128 bits; sandbox ids, tokens, exchange codes ≥128 bits; claim codes ≥64 (≥80 recommended)", () => {
    expect(IDENTIFIER_ENTROPY_BITS.public_handle).toBeGreaterThanOrEqual(128);
    expect(IDENTIFIER_ENTROPY_BITS.sandbox_id).toBeGreaterThanOrEqual(128);
    expect(IDENTIFIER_ENTROPY_BITS.exchange_code).toBeGreaterThanOrEqual(128);
    expect(IDENTIFIER_ENTROPY_BITS.agent_token).toBeGreaterThanOrEqual(256);
    expect(IDENTIFIER_ENTROPY_BITS.claim_code).toBeGreaterThanOrEqual(80);
    const handles = new Set(Array.from({ length: 2000 }, () => newPublicHandle()));
    expect(handles.size).toBe(2000);
    for (const h of handles) expect(h).toMatch(/^[a-z2-7]{26}$/);
    const codes = new Set(Array.from({ length: 2000 }, () => newClaimCode()));
    expect(codes.size).toBe(2000);
  });

  it("MUST §12.1/§12.2: handles are uncorrelated with internal ids and internal ids never appear in public URLs or pages", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    expect(a.id).toMatch(/^sbx_[A-Za-z0-9]{22}$/);
    expect(a.handle.toLowerCase()).not.toContain(a.id.slice(4, 10).toLowerCase());
    const { pub } = await publishFaq(p, a);
    expect(str(pub, "published_url")).not.toContain(a.id);
    const page = await p.req(new URL(str(pub, "published_url")).hostname, "GET", "/");
    expect(page.status).toBe(200);
    expect(page.body).not.toContain(a.id);
  });

  it("MUST §15.1 / App. B: handles rotate on publish; the old handle answers exactly like an unknown handle, no redirect", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const before = await p.req(`${a.handle}.pub.localhost`, "GET", "/");
    const { pub } = await publishFaq(p, a);
    expect(at(pub, "handle_rotated")).toBe(true);
    const newHandle = str(pub, "new_handle");
    expect(newHandle).not.toBe(a.handle);
    const old = await p.req(`${a.handle}.pub.localhost`, "GET", "/acme-help");
    const unknown = await p.req(`${newPublicHandle()}.pub.localhost`, "GET", "/acme-help");
    expect(old.status).toBe(404);
    expect(old.headers["location"]).toBeUndefined();
    expect(shape(old)).toEqual(shape(unknown));
    expect(shape(before)).toEqual(shape(unknown));
    expect(old.body).toBe(FAILURE_BODY);
  });

  it("MUST §15.1 / §19.4 / App. B: handles rotate on claim; the published handle dies and is tombstoned (never served again)", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const { pub } = await publishFaq(p, a);
    const published = str(pub, "new_handle");
    const code = str(
      (await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth })).json(),
      "claim_code",
    );
    const { verify } = await humanClaim(p, code);
    expect(verify.status).toBe(200);
    const workspace = new URL(str(verify.json(), "published_url")).hostname.split(".")[0];
    expect(workspace).not.toBe(published);
    const old = await p.req(`${published}.pub.localhost`, "GET", "/");
    const unknown = await p.req(`${newPublicHandle()}.pub.localhost`, "GET", "/");
    expect(shape(old)).toEqual(shape(unknown));
    const rows = p.db.prepare("SELECT count(*) AS n FROM claim_handles WHERE retired_at IS NOT NULL").get() as {
      n: number;
    };
    expect(rows.n).toBe(2);
    // Handles are stored only as keyed hashes: no row holds a handle in clear.
    const dump = JSON.stringify(p.db.prepare("SELECT * FROM claim_handles").all());
    expect(dump).not.toContain(a.handle);
    expect(dump).not.toContain(published);
  });

  it("MUST §27 secrets stored as keyed hashes: no agent token, claim code or exchange code in the database in clear", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const code = str(
      (await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth })).json(),
      "claim_code",
    );
    const ex = str(
      (await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/preview`, { headers: a.auth, json: {} })).json(),
      "exchange_url",
    );
    const exCode = new URL(ex).searchParams.get("code") ?? "";
    const dump = JSON.stringify(p.db.prepare("SELECT * FROM claim_credentials").all());
    for (const secret of [a.token, code, code.replace(/-/g, "").slice(3), exCode]) expect(dump).not.toContain(secret);
  });
});
