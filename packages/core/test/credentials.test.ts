import { describe, expect, it } from "vitest";
import { injectCredentials } from "../src/index.js";

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
