import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROXY_ONLY_WARNING } from "../src/commands/proxy.js";
import { runCli } from "./run.js";

describe("acp proxy warns that it does not isolate the agent (consent protocol §9.2)", () => {
  it("says so on stderr when it starts, before any upstream, in words that name the fix", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-home-"));
    // (an upstream that cannot start ends the run at once: the warning comes before it is tried)
    const out = await runCli(["proxy", "--upstream", "/nonexistent/server"], { env: { ACP_HOME: home } });
    expect(out.stderr).toContain(`acp proxy: ${PROXY_ONLY_WARNING}\n`);
    expect(PROXY_ONLY_WARNING).toContain("does not sandbox the agent");
    expect(PROXY_ONLY_WARNING).toContain("acp run -- AGENT");
    expect(out.stderr.indexOf(PROXY_ONLY_WARNING)).toBeLessThan(out.stderr.indexOf("upstream `server` failed"));
  });

  it("does not say it when the command is refused before it starts (usage)", async () => {
    const out = await runCli(["proxy"], { env: { ACP_HOME: mkdtempSync(join(tmpdir(), "acp-home-")) } });
    expect(out.code).toBe(2);
    expect(out.stderr).not.toContain(PROXY_ONLY_WARNING);
  });

  it("nor when the policy or the --intent file stops it: the one line says why", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-home-"));
    const env = { ACP_HOME: home };
    const noIntent = await runCli(["proxy", "-u", "/nonexistent/server", "--intent", join(home, "none.yml")], { env });
    expect(noIntent.code).toBe(1);
    expect(noIntent.stderr).toBe(`acp: cannot read intent \`${join(home, "none.yml")}\`: no such file\n`);
    writeFileSync(join(home, "broken.yml"), 'version: "1"\ndefault_action: alow\nrules: []\n');
    const badPolicy = await runCli(["proxy", "-u", "/nonexistent/server", "--policy", join(home, "broken.yml")], {
      env,
    });
    expect(badPolicy.code).toBe(4);
    expect(badPolicy.stderr).not.toContain(PROXY_ONLY_WARNING);
    expect(badPolicy.stderr).toContain("broken.yml:2:17");
  });
});
