import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeVault } from "@acp/store";
import {
  createCredentialHook,
  credentialRulesFrom,
  credentialWarnings,
  type CredentialRule,
} from "../src/wiring/credentials.js";
import { readConfigFile } from "../src/wiring/config-file.js";
import { loadRedactionRules } from "../src/wiring/redaction-config.js";
import { tempRoot } from "./home-fixture.js";

const root = tempRoot("credentials-config");
afterAll(root.cleanup);
let n = 0;

function homeWith(config: string): string {
  const home = join(root.dir, `h${++n}`);
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, "config.yml"), config);
  return home;
}

/** `credentials:` of the home's config.yml, read the way the proxy reads its config file. */
function loadCredentialRules(home: string): CredentialRule[] {
  const file = readConfigFile(join(home, "config.yml"), false);
  return credentialRulesFrom(file.values["credentials"], file.path);
}

function failure(config: string): string {
  try {
    loadCredentialRules(homeWith(config));
  } catch (err) {
    return (err as Error).message;
  }
  return "no error";
}

describe("config.yml credentials:", () => {
  it("reads the older argument form, inject: {argument}, {header, format} and {env}", () => {
    const rules = loadCredentialRules(
      homeWith(`credentials:
  - { secret: A, server: s, tool: t, argument: token }
  - { secret: B, tool: t, inject: { argument: key } }
  - { secret: C, server: web, inject: { header: Authorization, format: "Bearer {value}" } }
  - { secret: D, server: web, inject: { header: X-Api-Key } }
  - { secret: E, server: local, inject: { env: GITHUB_TOKEN } }
`),
    );
    expect(rules.map((r) => [r.secret, r.place.kind, r.place.name])).toEqual([
      ["A", "argument", "token"],
      ["B", "argument", "key"],
      ["C", "header", "Authorization"],
      ["D", "header", "X-Api-Key"],
      ["E", "env", "GITHUB_TOKEN"],
    ]);
    expect(rules[2]?.place).toMatchObject({ format: "Bearer {value}" });
    expect(rules[3]?.place).toMatchObject({ format: "{value}" });
    expect(rules[0]?.server("s")).toBe(true);
    expect(rules[0]?.server("other")).toBe(false);
  });

  it('warns about an entry that names no server (it goes to every upstream), never about `server: "*"`', () => {
    const rules = loadCredentialRules(
      homeWith(`credentials:
  - { secret: A, server: github, tool: t, inject: { argument: token } }
  - { secret: B, tool: t, inject: { argument: key } }
  - { secret: C, server: "*", tool: t, inject: { argument: key } }
`),
    );
    expect(rules[1]?.server("any-upstream")).toBe(true);
    expect(credentialWarnings(rules)).toEqual([
      'credentials.1 (`B`) names no `server`, so it goes to every upstream, any added later included: name the upstream(s) it is for (`server: github`), or write `server: "*"` if every one is meant',
    ]);
  });

  it.each([
    ["- { secret: C, inject: { header: 'Bad Name' } }", "credentials.0.inject.header: must be a header name"],
    ["- { secret: C, inject: { header: Content-Type } }", "`Content-Type` belongs to the transport"],
    [
      "- { secret: C, inject: { header: A, format: 'Bearer x' } }",
      "credentials.0.inject.format: must be one line containing `{value}`",
    ],
    [
      "- { secret: C, tool: t, inject: { env: X } }",
      "credentials.0.tool: a header or environment credential applies to the whole server",
    ],
    ["- { secret: C, inject: { env: '1X' } }", "credentials.0.inject.env: must be a variable name"],
    ["- { secret: C, argument: a, inject: { env: X } }", "give either `argument` or `inject`, not both"],
    ["- { secret: C, inject: { env: X, header: Y } }", "must be one of {header, format?}, {env} or {argument}"],
    ["- { secret: C }", "needs `argument` or `inject`"],
    ["- { inject: { env: X } }", "needs `secret` (a vault entry name)"],
    ["- { secret: C, inject: { env: X }, color: red }", "unknown key `color`"],
  ])("refuses %s", (entry, message) => {
    expect(failure(`credentials:\n  ${entry}\n`)).toContain(message);
  });
});

describe("config.yml redaction:", () => {
  it("adds patterns to the defaults, or replaces them with defaults: false", () => {
    const extended = loadRedactionRules(homeWith("redaction:\n  keys: [pin]\n  values: ['/\\d{4}-\\d{4}/i']\n"));
    expect(extended.keys).toContain("pin");
    expect(extended.keys).toContain("*token*");
    expect(extended.values.at(-1)?.source).toBe("\\d{4}-\\d{4}");
    expect(extended.values.at(-1)?.flags).toBe("i");
    const only = loadRedactionRules(homeWith("redaction:\n  defaults: false\n  keys: [pin]\n"));
    expect(only).toEqual({ keys: ["pin"], values: [] });
  });

  it("names every problem and exits 4", () => {
    let error: unknown;
    try {
      loadRedactionRules(homeWith("redaction:\n  keys: pin\n  values: ['(']\n  color: red\n"));
    } catch (err) {
      error = err;
    }
    const message = (error as Error).message;
    expect(message).toContain("unknown key `redaction.color`");
    expect(message).toContain("`redaction.keys` must be a list");
    expect(message).toContain("`redaction.values.0` is not a regular expression");
    expect((error as { exitCode?: number }).exitCode).toBe(4);
  });
});

describe("the credential hook's transport credentials", () => {
  const CANARY = "hookcanary-31f0-value";
  const seed = new Uint8Array(32).fill(7);

  function hookFor(config: string): ReturnType<typeof createCredentialHook> {
    const home = homeWith(config);
    const written = writeVault(home, { TOKEN: CANARY }, seed, (n) => randomBytes(n));
    expect(written.ok).toBe(true);
    return createCredentialHook({ home, rules: loadCredentialRules(home), seed: () => Promise.resolve(seed) });
  }
  const web = { name: "web", transport: "streamable-http", url: "http://127.0.0.1:1/mcp" } as const;
  const local = { name: "local", transport: "stdio", command: "node", args: [] } as const;

  it("formats a header for a URL upstream and sets a variable for a command, naming entries only", async () => {
    const hook = hookFor(`credentials:
  - { secret: TOKEN, server: web, inject: { header: Authorization, format: "Bearer {value}" } }
  - { secret: TOKEN, server: local, inject: { env: API_TOKEN } }
`);
    expect(await hook?.upstream?.(web)).toEqual({
      headers: { Authorization: `Bearer ${CANARY}` },
      injected: ["TOKEN"],
    });
    expect(await hook?.upstream?.(local)).toEqual({ env: { API_TOKEN: CANARY }, injected: ["TOKEN"] });
    expect(await hook?.upstream?.({ ...local, name: "other" })).toBeUndefined();
    expect(hook?.secretValues()).toContain(CANARY);
  });

  it.each([
    ["{ secret: TOKEN, server: local, inject: { header: X-Key } }", local, "a header needs a URL upstream"],
    ["{ secret: TOKEN, server: web, inject: { env: KEY } }", web, "an environment variable needs a command upstream"],
    ["{ secret: NOPE, server: web, inject: { header: X-Key } }", web, "vault has no entry `NOPE`"],
  ] as const)("refuses %s with a message that names the entry, never the value", async (entry, spec, message) => {
    const hook = hookFor(`credentials:\n  - ${entry}\n`);
    const error = await hook?.upstream?.(spec).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(error?.message).toContain(message);
    expect(error?.message).toContain("credentials.0");
    expect(error?.message).not.toContain(CANARY);
  });

  it("argument injection still fills the named argument of a matching tool only", async () => {
    const hook = hookFor("credentials:\n  - { secret: TOKEN, server: web, tool: 'create_*', argument: token }\n");
    expect(hook !== undefined && "upstream" in hook).toBe(false);
    expect(await hook?.inject("web", "create_issue", { a: 1 })).toEqual({
      arguments: { a: 1, token: CANARY },
      injected: ["TOKEN"],
    });
    expect(await hook?.inject("web", "list_issues", { a: 1 })).toEqual({ arguments: { a: 1 }, injected: [] });
  });
});
