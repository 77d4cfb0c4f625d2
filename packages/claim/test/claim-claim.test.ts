import { afterEach, describe, expect, it } from "vitest";
import { checkPow, FAILURE_BODY } from "../src/index.js";
import {
  cookiesOf,
  fromPage,
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

let p: Provider;
afterEach(async () => p?.close());

async function claimCode(a: Agent): Promise<string> {
  const r = await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth });
  expect(r.status).toBe(200);
  return str(r.json(), "claim_code");
}

async function claimPage(from?: string): Promise<{ cookie: string; csrf: string }> {
  const page = await p.req("admin.localhost", "GET", "/claim", from === undefined ? {} : { from });
  return { cookie: cookiesOf(page), csrf: /name="csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? "" };
}

async function getChallenge(
  code: string,
  s: { cookie: string; csrf: string },
): Promise<{ challenge: string; difficulty: number }> {
  const r = await p.req("admin.localhost", "POST", "/claim/challenge", {
    json: { code, csrf: s.csrf },
    headers: { cookie: s.cookie },
  });
  expect(r.status).toBe(200);
  return { challenge: str(r.json(), "challenge"), difficulty: num(r.json(), "difficulty") };
}

const verify = (
  s: { cookie: string; csrf: string },
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) =>
  p.req("admin.localhost", "POST", "/claim/verify", {
    json: { csrf: s.csrf, ...body },
    headers: { cookie: s.cookie, ...headers },
  });

describe("§19 Claim flow", () => {
  it("claim codes need a published sandbox, look like ACP-XXXX-…, live ≤ 1 h (MUST §19.1)", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    const early = await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth });
    expect(early.status).toBe(409);
    expect(str(early.json(), "error.code")).toBe("claim_not_published");
    await publishFaq(p, a);
    const r = await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth });
    expect(Date.parse(str(r.json(), "expires_at")) - Date.parse("2026-03-01T12:00:00Z")).toBeLessThanOrEqual(3_600_000);
    const code = str(r.json(), "claim_code");
    p.advance(3_600_000);
    const { verify: late } = await humanClaim(p, code);
    expect(late.body).toBe(FAILURE_BODY);
  });

  it("MUST §19.2 / App. B two factors: the code alone, a wrong nonce, a creation challenge or another code's challenge all fail", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const code = await claimCode(a);
    const s = await claimPage();
    const c = await getChallenge(code, s);
    const other = await getChallenge("ACP-AAAA-BBBB-CCCC-DDDD", s);
    const create = (await p.req("api.localhost", "GET", "/v1/sandboxes/challenge")).json();
    const attempts = [
      await verify(s, { code }),
      // A nonce that really fails (a fixed "0" passes a low difficulty 1 time in 2^d).
      await verify(s, {
        code,
        challenge: c.challenge,
        nonce: ["0", "1", "2", "3", "4"].find((n) => !checkPow(c.challenge, n, c.difficulty)) ?? "0",
      }),
      await verify(s, { code, challenge: other.challenge, nonce: solve(other.challenge, other.difficulty) }),
      await verify(s, {
        code,
        challenge: str(create, "challenge"),
        nonce: solve(str(create, "challenge"), num(create, "difficulty")),
      }),
    ];
    for (const r of attempts) expect(shape(r)).toEqual(shape(attempts[0]!));
    expect(attempts[0]!.body).toBe(FAILURE_BODY);
    const ok = await verify(s, { code, challenge: c.challenge, nonce: solve(c.challenge, c.difficulty) });
    expect(ok.status).toBe(200);
  });

  it("MUST §19.1 single use / §19.5 identical responses for all failure modes (unknown, used, expired, wrong PoW, malformed)", async () => {
    p = await startProvider({ claimPerIpPerHour: 100, claimPerCodePerHour: 100 });
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const code = await claimCode(a);
    const b = await createSandbox(p);
    await publishFaq(p, b);
    const bCode = await claimCode(b);
    expect((await humanClaim(p, code)).verify.status).toBe(200);
    const used = (await humanClaim(p, code)).verify;
    const unknown = (await humanClaim(p, "ACP-ZZZZ-ZZZZ-ZZZZ-ZZZ9")).verify;
    const malformed = (await humanClaim(p, "hello")).verify;
    p.advance(3_600_001);
    const expired = (await humanClaim(p, bCode)).verify;
    for (const r of [used, unknown, malformed, expired]) {
      expect(r.body).toBe(FAILURE_BODY);
      expect(shape(r)).toEqual(shape(used));
    }
  });

  it("MUST §19.4 state checked at verification: a deleted or expired sandbox cannot be claimed with a still-valid code", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const code = await claimCode(a);
    expect((await p.req("api.localhost", "DELETE", `/v1/sandboxes/${a.id}`, { headers: a.auth })).status).toBe(204);
    expect((await humanClaim(p, code)).verify.body).toBe(FAILURE_BODY);
    const b = await createSandbox(p);
    await publishFaq(p, b);
    const bCode = await claimCode(b);
    // The sandbox's TTL ends while the code itself is still unexpired.
    p.db
      .prepare("UPDATE claim_sandboxes SET expires_at = ? WHERE id = ?")
      .run(Date.parse("2026-03-01T12:00:00Z"), b.id);
    p.db
      .prepare("UPDATE claim_credentials SET expires_at = ? WHERE sandbox_id = ?")
      .run(Date.parse("2026-03-02T12:00:00Z"), b.id);
    p.advance(1);
    expect((await humanClaim(p, bCode)).verify.body).toBe(FAILURE_BODY);
    expect((await p.server.store.sandbox(b.id))?.state).not.toBe("claimed");
  });

  it("MUST §19.4 claim is atomic with the transition: two concurrent verifications of one code, exactly one wins", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const code = await claimCode(a);
    const s1 = await claimPage();
    const s2 = await claimPage();
    const c1 = await getChallenge(code, s1);
    const c2 = await getChallenge(code, s2);
    const [r1, r2] = await Promise.all([
      verify(s1, { code, challenge: c1.challenge, nonce: solve(c1.challenge, c1.difficulty) }),
      verify(s2, { code, challenge: c2.challenge, nonce: solve(c2.challenge, c2.difficulty) }),
    ]);
    expect([r1.status, r2.status].sort()).toEqual([200, 404]);
  });

  it("MUST §7.4 / §19.4 claim success invalidates every sandbox token, preview session, outstanding exchange and claim code", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const ex1 = new URL(
      str(
        (await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/preview`, { headers: a.auth, json: {} })).json(),
        "exchange_url",
      ),
    );
    const session = cookiesOf(
      await p.req("preview.localhost", "POST", "/exchange", {
        form: { code: ex1.searchParams.get("code") ?? "" },
        headers: fromPage(p, "preview.localhost"),
      }),
    );
    expect((await p.req("preview.localhost", "GET", "/", { headers: { cookie: session } })).status).toBe(200);
    const ex2 = new URL(
      str(
        (await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/preview`, { headers: a.auth, json: {} })).json(),
        "exchange_url",
      ),
    );
    const spare = await claimCode(a);
    const code = await claimCode(a);
    expect((await humanClaim(p, code)).verify.status).toBe(200);
    const after = [
      await p.req("api.localhost", "GET", "/v1/faqs", { headers: a.auth }),
      await p.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth }),
      await p.req("preview.localhost", "GET", "/", { headers: { cookie: session } }),
      await p.req("preview.localhost", "POST", "/exchange", {
        form: { code: ex2.searchParams.get("code") ?? "" },
        headers: fromPage(p, "preview.localhost"),
      }),
      (await humanClaim(p, spare)).verify,
    ];
    for (const r of after) expect(r.body).toBe(FAILURE_BODY);
  });

  it("MUST §19.5 / App. B rate limits per IP and per code, before any lookup, identical for real and unknown codes", async () => {
    p = await startProvider({ claimPerCodePerHour: 2, claimPerIpPerHour: 100 });
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const code = await claimCode(a);
    const s = await claimPage();
    const unknown = "ACP-QQQQ-QQQQ-QQQQ-QQQQ";
    for (const c of [code, unknown]) {
      await verify(s, { code: c });
      await verify(s, { code: c });
    }
    const real = await verify(s, { code });
    const fake = await verify(s, { code: unknown });
    expect(real.status).toBe(429);
    expect(shape(real)).toEqual(shape(fake));
    await p.close();
    p = await startProvider({ claimPerIpPerHour: 3 });
    const s2 = await claimPage();
    for (let i = 0; i < 3; i++) await verify(s2, { code: `ACP-AAAA-AAAA-AAAA-AAA${i}` });
    expect((await verify(s2, { code: "ACP-AAAA-AAAA-AAAA-AAA9" })).status).toBe(429);
    const s3 = await claimPage("127.0.1.1");
    const other = await p.req("admin.localhost", "POST", "/claim/verify", {
      json: { code: "ACP-AAAA-AAAA-AAAA-AAA9", csrf: s3.csrf },
      headers: { cookie: s3.cookie },
      from: "127.0.1.1",
    });
    expect(other.status).toBe(404);
  });

  it("MUST §19.5 / App. B progressive lockout: after repeated failures even a correct code + PoW is refused, the same way as for an unknown code", async () => {
    p = await startProvider({ claimPerIpPerHour: 1000, claimPerCodePerHour: 1000 });
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const code = await claimCode(a);
    const s = await claimPage();
    for (let i = 0; i < 6; i++) {
      const typed = `ACP-BBBB-BBBB-BBBB-BBB${i}`;
      const c = await getChallenge(typed, s);
      expect(
        (await verify(s, { code: typed, challenge: c.challenge, nonce: solve(c.challenge, c.difficulty) })).status,
      ).toBe(404);
    }
    const locked = (await humanClaim(p, code)).verify;
    expect(locked.status).toBe(429);
    expect(shape(locked)).toEqual(shape((await humanClaim(p, "ACP-CCCC-CCCC-CCCC-CCCC")).verify));
    p.advance(31_000);
    expect((await humanClaim(p, code)).verify.status).toBe(200);
  });

  it("§19.5 malformed codes count against their sender's range: a flood of garbage locks out no one else's attempts", async () => {
    p = await startProvider({ claimPerIpPerHour: 1000, claimPerCodePerHour: 1000 });
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const code = await claimCode(a);
    const attacker = "127.0.1.1"; // another /24 than the human's 127.0.0.1
    // Six failed verifications, each with a proof, each with different garbage (all of one canonical form).
    for (let i = 0; i < 6; i++) expect((await humanClaim(p, `garbage-${i}`, attacker)).verify.status).toBe(404);
    // The attacker's range is locked out now, whatever it types.
    expect((await humanClaim(p, "still-garbage", attacker)).verify.status).toBe(429);
    expect((await humanClaim(p, code, attacker)).verify.status).toBe(429);
    // A human in another range mistypes the code (a character short: malformed). It is the failure answer, not a
    // lockout: the old shared counter for every malformed code was locked by the attacker (429 here).
    const typo = await humanClaim(p, code.slice(0, -1));
    expect(typo.verify.status).toBe(404);
    expect(typo.verify.body).toBe(FAILURE_BODY);
    expect((await humanClaim(p, code)).verify.status).toBe(200);
  });

  it("§19.5 the per-code rate limit of malformed codes is per sender: garbage from one range does not 429 another's typos", async () => {
    p = await startProvider({ claimPerCodePerHour: 3, claimPerIpPerHour: 1000 });
    const ask = async (typed: string, from: string): Promise<number> => {
      const s = await claimPage(from);
      const r = await p.req("admin.localhost", "POST", "/claim/challenge", {
        json: { code: typed, csrf: s.csrf },
        headers: { cookie: s.cookie },
        from,
      });
      return r.status;
    };
    // Challenges cost the sender nothing: the old shared counter let any range spend the limit for everyone.
    const flood = [];
    for (let i = 0; i < 5; i++) flood.push(await ask(`x${i}`, "127.0.1.1"));
    expect(flood).toEqual([200, 200, 200, 429, 429]);
    expect(await ask("ACP-1234-5678", "127.0.0.1")).toBe(200);
    expect(await ask("", "127.0.2.1")).toBe(200);
    // Well-formed codes keep their per-code limit across ranges (a code guessed from many ranges still stops).
    const one = "ACP-QQQQ-QQQQ-QQQQ-QQQQ";
    expect([await ask(one, "127.0.3.1"), await ask(one, "127.0.4.1"), await ask(one, "127.0.5.1")]).toEqual([
      200, 200, 200,
    ]);
    expect(await ask(one.toLowerCase(), "127.0.6.1")).toBe(429);
  });

  it("§19.5 a post with no proof at all is no verification: the page's script-less form gets a page saying why, and nothing counts toward the lockout", async () => {
    p = await startProvider({ claimPerIpPerHour: 1000, claimPerCodePerHour: 1000 });
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const code = await claimCode(a);
    const s = await claimPage();
    const difficulty = async (): Promise<number> =>
      num((await p.req("api.localhost", "GET", "/v1/sandboxes/challenge")).json(), "difficulty");
    const before = await difficulty();
    // The claim page's form, as a browser without JavaScript sends it (Origin null under no-referrer), pressed
    // more often than the lockout's free failures — with the real code and with typos.
    for (let i = 0; i < 8; i++) {
      const r = await p.req("admin.localhost", "POST", "/claim/verify", {
        form: { code: i % 2 === 0 ? code : `ACP-BBBB-BBBB-BBBB-BBB${i}`, csrf: s.csrf },
        headers: { cookie: s.cookie, origin: "null", "sec-fetch-site": "same-origin" },
      });
      expect(r.status).toBe(400);
      expect(r.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(r.headers["content-security-policy"]).toContain("script-src 'none'");
      expect(r.body).toContain("This page needs JavaScript");
      expect(r.body).toContain('href="/claim"');
    }
    // Sent as JSON, no proof is the one failure answer — and uncounted too.
    for (let i = 0; i < 3; i++) expect((await verify(s, { code })).body).toBe(FAILURE_BODY);
    expect(await difficulty()).toBe(before);
    expect((await p.server.store.sandbox(a.id))?.state).toBe("published"); // the code was not used
    // The old code counted each press as a failed verification: this range was locked out (429) by now.
    expect((await humanClaim(p, code)).verify.status).toBe(200);
  });

  it("MUST §21 CSRF: verification needs the page's token and cookie, and a same-origin request", async () => {
    p = await startProvider();
    const a = await createSandbox(p);
    await publishFaq(p, a);
    const code = await claimCode(a);
    const s = await claimPage();
    const c = await getChallenge(code, s);
    const nonce = solve(c.challenge, c.difficulty);
    const noCookie = await p.req("admin.localhost", "POST", "/claim/verify", {
      json: { code, csrf: s.csrf, challenge: c.challenge, nonce },
    });
    const wrongToken = await verify(
      { cookie: s.cookie, csrf: "x".repeat(43) },
      { code, challenge: c.challenge, nonce },
    );
    const crossSite = await verify(s, { code, challenge: c.challenge, nonce }, { origin: "https://evil.example" });
    for (const r of [noCookie, wrongToken, crossSite]) expect(r.body).toBe(FAILURE_BODY);
    expect(
      (await verify(s, { code, challenge: c.challenge, nonce }, { origin: `http://admin.localhost:${p.port}` })).status,
    ).toBe(200);
  });

  it("MUST §21 claim page: X-Frame-Options DENY, frame-ancestors 'none', CSRF cookie HttpOnly SameSite=Strict", async () => {
    p = await startProvider();
    const page = await p.req("admin.localhost", "GET", "/claim");
    expect(page.status).toBe(200);
    expect(page.headers["x-frame-options"]).toBe("DENY");
    expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(String(page.headers["set-cookie"])).toMatch(
      /^acp_csrf=[A-Za-z0-9]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=3600$/,
    );
    expect(page.body).toContain("crypto.subtle.digest");
  });
});
