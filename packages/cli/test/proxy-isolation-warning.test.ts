import { mkdtempSync } from "node:fs";
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
});
