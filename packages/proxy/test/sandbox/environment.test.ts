import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sandboxVariables, scrubEnvironment } from "../../src/index.js";

describe("scrubEnvironment", () => {
  it("removes ACP_* variables, proxy variables and anything holding an ACP secret", () => {
    const { env, removed } = scrubEnvironment(
      {
        PATH: "/usr/bin",
        ACP_HOME: "/root/.acp",
        ACP_PASSPHRASE: "hunter2hunter2",
        ACP_PROXY_TOKEN: "tok",
        HTTPS_PROXY: "http://elsewhere:3128",
        GITHUB_TOKEN: "ghp_abc_SECRETVALUE_def",
        EDITOR: "vi",
        UNSET: undefined,
      },
      { secretValues: ["SECRETVALUE"] },
    );
    expect(env).toEqual({ PATH: "/usr/bin", EDITOR: "vi" });
    expect(removed).toEqual(["ACP_HOME", "ACP_PASSPHRASE", "ACP_PROXY_TOKEN", "GITHUB_TOKEN", "HTTPS_PROXY"]);
  });

  it("does not look for a short secret value inside other values", () => {
    expect(scrubEnvironment({ SHELL: "/bin/sh" }, { secretValues: ["sh"] }).env).toEqual({ SHELL: "/bin/sh" });
  });

  it("removes a variable whose value is a secret exactly, however short", () => {
    const { env, removed } = scrubEnvironment(
      { PIN: "4711", API_KEY: "abc12", SHELL: "/bin/sh", PORT: "47110", EMPTY: "" },
      { secretValues: ["4711", "abc12", ""] },
    );
    // the short secrets as whole values go; a value that merely contains one stays, and "" matches nothing
    expect(env).toEqual({ SHELL: "/bin/sh", PORT: "47110", EMPTY: "" });
    expect(removed).toEqual(["API_KEY", "PIN"]);
  });

  it("never leaves a variable whose value is a secret, of any length (property)", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 30 })),
        fc.string({ minLength: 1, maxLength: 12 }),
        (vars, secret) => {
          const { env } = scrubEnvironment({ ...vars, PLANTED: secret }, { secretValues: [secret] });
          expect(Object.values(env)).not.toContain(secret);
        },
      ),
    );
  });

  it("never leaves a variable whose value contains a secret (property)", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 30 })),
        fc.string({ minLength: 6, maxLength: 12 }),
        (vars, secret) => {
          const { env } = scrubEnvironment({ ...vars, PLANTED: `x${secret}y` }, { secretValues: [secret] });
          for (const [name, value] of Object.entries(env)) {
            expect(value.includes(secret)).toBe(false);
            expect(name.startsWith("ACP_")).toBe(false);
          }
        },
      ),
    );
  });

  it("points the agent at the bridged endpoints and keeps loopback off the proxy", () => {
    const vars = sandboxVariables({
      mcpUrl: "http://127.0.0.1:1/mcp",
      egressUrl: "http://127.0.0.1:2",
      isolation: "netns",
    });
    expect(vars).toMatchObject({
      ACP_MCP_URL: "http://127.0.0.1:1/mcp",
      HTTPS_PROXY: "http://127.0.0.1:2",
      HTTP_PROXY: "http://127.0.0.1:2",
      NO_PROXY: "localhost,127.0.0.1,::1",
    });
  });
});
