import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadCredentialRules } from "../src/wiring/credentials.js";
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
    expect(extended.values.at(-1)?.flags).toBe("gi");
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
