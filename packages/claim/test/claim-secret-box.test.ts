/**
 * The SecretBox encodes its input as UTF-8, which has no form for a lone surrogate: `x\uD800` was hashed, signed
 * and sealed as `x\uFFFD` (and as `x\uDBFF`), so different texts were one secret. It now refuses them with a clear
 * error, and `equal` compares code unit for code unit. The routes check what they take from a request first, so a
 * client never meets the error: a lone surrogate in an exchange code or a DPoP `jti` finds nothing.
 */
import { randomBytes, sign } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createSecretBox, FAILURE_BODY, LoneSurrogateError } from "../src/index.js";
import { newDpopKey } from "../src/secrets/dpop.js";
import { fromPage, num, solve, startProvider, str, type Provider } from "./harness.js";

let p: Provider | undefined;
afterEach(async () => p?.close());

const box = createSecretBox(randomBytes(32));

/** The error a call throws (undefined when it returns). */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe("SecretBox and lone surrogates", () => {
  it("hash, sign and seal refuse text with a lone surrogate (claim_lone_surrogate), naming where, never the text", () => {
    // On the old code each returned: `x\uD800` hashed exactly as `x\uFFFD`.
    const cases: [() => unknown, string][] = [
      [
        () => box.hash("exchange_code", "secret\uD800"),
        "secret box: refused to hash a `exchange_code` value: it holds a lone surrogate at index 6 (UTF-8 would turn it into U+FFFD, so different texts would hash alike)",
      ],
      [
        () => box.hash("claim_code", "\uDC00secret"),
        "secret box: refused to hash a `claim_code` value: it holds a lone surrogate at index 0 (UTF-8 would turn it into U+FFFD, so different texts would hash alike)",
      ],
      [
        () => box.sign("pow", "claim", "ab\uDBFF"),
        "secret box: refused to sign part 3: it holds a lone surrogate at index 2 (UTF-8 would turn it into U+FFFD, so different texts would sign alike)",
      ],
      [
        () => box.seal("handle\uD83D"),
        "secret box: refused to seal a value: it holds a lone surrogate at index 6 (UTF-8 would turn it into U+FFFD, so different texts would seal alike)",
      ],
    ];
    for (const [call, message] of cases) {
      const e = thrown(call);
      expect(e).toBeInstanceOf(LoneSurrogateError);
      expect((e as LoneSurrogateError).code).toBe("claim_lone_surrogate");
      expect((e as LoneSurrogateError).message).toBe(message);
      expect((e as LoneSurrogateError).message).not.toContain("secret\uD800");
    }
  });

  it("well-formed text is unchanged: pairs, U+FFFD itself and plain text hash, sign and seal as before", () => {
    expect(box.hash("k", "emoji \uD83D\uDE00")).toMatch(/^[0-9a-f]{64}$/);
    expect(box.hash("k", "\uFFFD")).not.toBe(box.hash("k", "?"));
    expect(box.open(box.seal("h\uD83D\uDE00"))).toBe("h\uD83D\uDE00");
    expect(box.sign("a", "\uFFFD")).toMatch(/^[0-9a-f]{32}$/);
  });

  it("equal compares code unit for code unit: a lone surrogate equals only itself", () => {
    // On the old code `x\uD800` equalled `x\uFFFD` and `x\uDBFF`.
    expect(box.equal("x\uD800", "x\uFFFD")).toBe(false);
    expect(box.equal("x\uD800", "x\uDBFF")).toBe(false);
    expect(box.equal("x\uD800", "x\uD800")).toBe(true);
    expect(box.equal("abc", "abc")).toBe(true);
    expect(box.equal("abc", "abd")).toBe(false);
    expect(box.equal("\uD83D\uDE00", "\uD83D\uDE00")).toBe(true);
  });

  it("an exchange code with a lone surrogate (sent as JSON) is the one failure answer, not an error", async () => {
    p = await startProvider();
    const r = await p.req("preview.localhost", "POST", "/exchange", {
      rawJson: '{"code":"acp_exch_AAAAAAAAAAAAAAAAAAAA\\ud800"}',
      headers: fromPage(p, "preview.localhost"),
    });
    expect(r.status).toBe(404);
    expect(r.body).toBe(FAILURE_BODY);
  });

  it("a DPoP proof whose jti holds a lone surrogate is refused at creation (400 claim_invalid_dpop)", async () => {
    // On the old code it was accepted (201), its id spent as the same keyed hash as the one with U+FFFD.
    p = await startProvider();
    const key = newDpopKey();
    const { d: _d, ...pub } = key.privateJwk;
    void _d;
    const url = `http://api.localhost:${p.port}/v1/sandboxes`;
    const iat = Math.floor(Date.parse("2026-03-01T12:00:00Z") / 1000);
    const header = Buffer.from(
      JSON.stringify({ typ: "dpop+jwt", alg: "EdDSA", jwk: { kty: pub.kty, crv: pub.crv, x: pub.x } }),
    ).toString("base64url");
    const payload = Buffer.from(
      `{"htm":"POST","htu":${JSON.stringify(url)},"iat":${iat},"jti":"abcdefgh\\ud800"}`,
    ).toString("base64url");
    const signature = sign(null, Buffer.from(`${header}.${payload}`), { key: key.privateJwk, format: "jwk" });
    const c = (await p.req("api.localhost", "GET", "/v1/sandboxes/challenge")).json();
    const r = await p.req("api.localhost", "POST", "/v1/sandboxes", {
      json: {
        admission: {
          type: "proof_of_work",
          challenge: str(c, "challenge"),
          nonce: solve(str(c, "challenge"), num(c, "difficulty")),
        },
      },
      headers: { dpop: `${header}.${payload}.${signature.toString("base64url")}` },
    });
    expect(r.status).toBe(400);
    expect(str(r.json(), "error.code")).toBe("claim_invalid_dpop");
  });
});
