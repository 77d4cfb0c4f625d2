/**
 * A new user's most common YAML slip, a key written without its `:`, in the files `acp init` writes: the
 * message names the key and its line. In the commented config.yml the yaml library reports the next key,
 * comment lines later (`all mapping items must start at the same column`), which alone sends the reader
 * to the wrong line.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const root = tempRoot("yaml-missing-colon");
afterAll(root.cleanup);

/** `file` of a fresh home with its first line `from` made `to`; the 1-based line it is on. */
function edited(home: string, file: string, from: string, to: string): number {
  const path = join(home, file);
  const lines = readFileSync(path, "utf8").split("\n");
  const at = lines.indexOf(from);
  expect(at, `${from} in ${file}`).toBeGreaterThan(-1);
  lines[at] = to;
  writeFileSync(path, lines.join("\n"));
  return at + 1;
}

describe("a key without its `:` in the home's files is named with its line", () => {
  it("config.yml: `port 8443` (the yaml library reports the next key, comment lines later)", async () => {
    const { home } = fixtureHome(root.dir);
    const line = edited(home, "config.yml", "  port: 8443", "  port 8443");
    for (const argv of [["proxy", "--upstream", "node -e 1"], ["doctor"]]) {
      const out = await runCli(argv, { env: envFor(home) });
      expect(out.code, argv.join(" ")).toBe(argv[0] === "doctor" ? 1 : 4);
      expect(out.stdout + out.stderr).toContain(`(is a \`:\` missing after \`port\` on line ${line}?)`);
      // the library's own line is a later one: the hint is what points at the mistake
      expect(out.stdout + out.stderr).not.toContain(`config.yml:${line}:`);
    }
  });

  it("config.yml: an example uncommented by removing `# ` (its key indented deeper) is its own line", async () => {
    const { home } = fixtureHome(root.dir);
    const line = edited(home, "config.yml", "  #   max_sessions: 256", "    max_sessions: 256");
    const port = readFileSync(join(home, "config.yml"), "utf8").split("\n").indexOf("  port: 8443") + 1;
    const out = await runCli(["proxy", "--upstream", "node -e 1"], { env: envFor(home) });
    expect(out.code).toBe(4);
    // the yaml library alone said the first comment line after `port: 8443`
    expect(out.stderr).toContain(
      `config.yml:${line}:5: all mapping items must start at the same column (\`max_sessions\` starts at column 5, \`port\` on line ${port} at column 3: the keys of one mapping start at the same column)`,
    );
  });

  it("policy.yml: `action allow`, through acp policy validate", async () => {
    const { home } = fixtureHome(root.dir);
    const line = edited(home, "policy.yml", "    action: allow", "    action allow");
    const out = await runCli(["policy", "validate"], { env: envFor(home) });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain(
      `policy.yml:${line}:5: yaml syntax error: implicit map keys need to be followed by map values (is a \`:\` missing after \`action\` on line ${line}?)`,
    );
  });
});
