import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { openGuard } from "../../src/guard/index.js";
import { fixtureHome, tempRoot } from "../home-fixture.js";

const root = tempRoot("guard-passphrase");
afterAll(() => root.cleanup());

describe("openGuard over an encrypted home key without a passphrase", () => {
  // the guard reads the program's environment: none here, whatever the test run has
  const saved = process.env["ACP_PASSPHRASE"];
  beforeEach(() => void delete process.env["ACP_PASSPHRASE"]);
  afterEach(() => {
    if (saved === undefined) delete process.env["ACP_PASSPHRASE"];
    else process.env["ACP_PASSPHRASE"] = saved;
  });

  it("says to pass `passphrase` or set it in the program's environment, not in a proxy's", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "policy.yml"), 'version: "1"\ndefault_action: allow\nrules: []\n');
    const lines: string[] = [];
    const acp = await openGuard({ home, log: (line) => lines.push(line) });
    const lookup = acp.guard("lookup", (args: { id: string }) => `found ${args.id}`, { server: "crm" });
    await expect(lookup({ id: "c1" })).resolves.toBe("found c1");
    await acp.close(); // the final checkpoint wants the key
    const warning = lines.find((line) => line.includes("ACP_PASSPHRASE is not set"));
    expect(warning).toBe(
      "acp guard: audit checkpoints are not signed: the private key is encrypted and ACP_PASSPHRASE is not set (pass `passphrase` to openGuard, or set it in the environment of the program that opens the guard)",
    );
    expect(lines.join("\n")).not.toMatch(/proxy's environment|MCP client/);
  });
});
