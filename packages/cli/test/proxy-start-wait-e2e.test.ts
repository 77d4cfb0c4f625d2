import { randomBytes } from "node:crypto";
import { appendFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { connectProxy, EVERYTHING, ROOT } from "./proxy-client-fixture.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

/**
 * A real `acp proxy` in front of a server that hangs at its start and a real server-everything: the MCP SDK
 * client (whose `initialize` gives up after 60 s) connects and works with server-everything's tools. Before,
 * the proxy answered `initialize` only once every upstream had started or failed: 60 s for a hanging one.
 */
const root = tempRoot("proxy-start-wait");
afterAll(root.cleanup);
/** The hanging server, with an argument of its own (ignored by it) that tells its process from any other. */
const MARKER = `hung-${randomBytes(6).toString("hex")}`;
const HUNG = `${process.execPath} ${join(ROOT, "packages/proxy/test/fixtures/slow-start-server.mjs")} ${MARKER}`;

/** Whether a process with MARKER on its command line is running. */
function hungServerRunning(): boolean {
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(MARKER)) return true;
    } catch {
      // it ended while we looked
    }
  }
  return false;
}

describe("acp proxy with an upstream that hangs at its start", () => {
  it("serves the other upstream after --start-wait: the client connects and calls its tools", async () => {
    const { home } = fixtureHome(root.dir);
    // echo is a read here: server-everything, not marked trusted, does not make it one by its `readOnlyHint`
    appendFileSync(join(home, "policy.yml"), "  - { tool: echo, category: read }\n");
    const client = await connectProxy(envFor(home), {
      name: "start-wait",
      args: ["proxy", "-u", HUNG, "-u", EVERYTHING, "-n", "hung", "-n", "everything", "--start-wait", "1"],
    });
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("echo");
      const echo = await client.callTool({ name: "echo", arguments: { message: "not held back" } });
      expect(JSON.stringify(echo.content)).toContain("not held back");
      expect(hungServerRunning()).toBe(true);
    } finally {
      await client.close();
    }
    // the SDK client ends the proxy (stdin closed, SIGTERM 2 s later): the server still starting ends with it,
    // though it never reads its stdin (it was left running, a child of nobody)
    await expect.poll(hungServerRunning, { timeout: 10_000, interval: 100 }).toBe(false);
  }, 120_000);

  it("refuses a --start-wait that is not a positive number of seconds, before any upstream starts", async () => {
    const { home } = fixtureHome(root.dir);
    for (const value of ["0", "-3", "soon"]) {
      const out = await runCli(["proxy", "-u", EVERYTHING, "--start-wait", value], { env: envFor(home) });
      expect(out.code).toBe(2);
      expect(out.stderr).toContain(`--start-wait: \`${value}\` is not a positive number of seconds`);
      expect(out.stderr).not.toContain("upstream `");
    }
  });
});
