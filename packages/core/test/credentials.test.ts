import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { injectCredentials, redactSecrets, REDACTED } from "../src/index.js";

describe("credential injection", () => {
  it("returns new arguments with the credential in its named argument and never mutates the input", () => {
    const args = Object.freeze({ repo: "acme/app", title: "bug" });
    const r = injectCredentials(args, [{ secret: "GITHUB_TOKEN", target: { kind: "argument", name: "token" } }], {
      GITHUB_TOKEN: "ghp_canary",
    });
    expect(r).toEqual({
      ok: true,
      value: { arguments: { repo: "acme/app", title: "bug", token: "ghp_canary" }, injected: ["GITHUB_TOKEN"] },
    });
    expect(args).toEqual({ repo: "acme/app", title: "bug" });
  });

  it("leaves header and env targets to the transport", () => {
    const r = injectCredentials({}, [{ secret: "K", target: { kind: "header", name: "Authorization" } }], { K: "v" });
    expect(r).toEqual({ ok: true, value: { arguments: {}, injected: [] } });
  });

  it("names a missing entry without a value and refuses prototype keys", () => {
    const missing = injectCredentials({}, [{ secret: "NOPE", target: { kind: "argument", name: "t" } }], {
      K: "canary",
    });
    expect(missing.ok ? "ok" : missing.issues[0]?.code).toBe("credential_missing");
    const proto = injectCredentials({}, [{ secret: "K", target: { kind: "argument", name: "__proto__" } }], {
      K: "canary",
    });
    expect(proto.ok ? "ok" : proto.issues[0]?.code).toBe("credential_target_invalid");
    expect(JSON.stringify(missing) + JSON.stringify(proto)).not.toContain("canary");
  });
});

describe("redaction", () => {
  it("removes known secret values anywhere, values under secret-looking keys, and token shapes", () => {
    const input = {
      note: "my key is s3cr3t-canary, ok",
      nested: [{ headers: { Authorization: "Bearer x" } }],
      bot_token: "123",
      password: "pw",
      text: "ghp_" + "a".repeat(36),
      ["s3cr3t-canary"]: 1,
    };
    const out = redactSecrets(input, ["s3cr3t-canary"]);
    const text = JSON.stringify(out);
    expect(text).not.toContain("s3cr3t-canary");
    expect(text).not.toContain("ghp_");
    expect(out).toMatchObject({ note: `my key is ${REDACTED}, ok`, bot_token: REDACTED, password: REDACTED });
    expect(input.note).toContain("canary");
  });

  it("never leaves a planted secret in the output, whatever the surrounding value (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ minLength: 8 }), (value, secret) => {
        fc.pre(!secret.includes(REDACTED) && !REDACTED.includes(secret));
        const planted = { value, at: `x${secret}y`, list: [secret] };
        expect(JSON.stringify(redactSecrets(planted, [secret], { keys: [], values: [] }))).not.toContain(
          JSON.stringify(secret).slice(1, -1),
        );
      }),
    );
  });
});
