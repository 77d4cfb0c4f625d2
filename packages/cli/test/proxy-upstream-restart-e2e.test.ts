import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { connectProxy, ROOT } from "./proxy-client-fixture.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

/**
 * A real `acp proxy` in front of the fixture server, whose `crash` tool exits its process: the proxy starts
 * it again (`proxy.restart_upstreams`, on by default), and the client's calls reach it again; with
 * `restart_upstreams: false` it stays stopped.
 */
const root = tempRoot("proxy-upstream-restart");
afterAll(root.cleanup);
const FIXTURE = `${process.execPath} ${join(ROOT, "packages/proxy/test/fixtures/fixture-server.mjs")}`;

/** A home whose policy allows every call (the crash is called, not asked about). */
function allowingHome(): string {
  const { home } = fixtureHome(root.dir);
  writeFileSync(join(home, "policy.yml"), 'version: "1"\ndefault_action: allow\n');
  return home;
}

/**
 * Whether `echo` answers `text`. Each text once: the session runtime asks about a call whose argument a tool
 * result showed before (a value from untrusted text reaching a call), and nobody answers here.
 */
async function echoAnswers(client: Awaited<ReturnType<typeof connectProxy>>, text: string): Promise<boolean> {
  const result = await client.callTool({ name: "echo", arguments: { text } });
  return result.isError !== true && JSON.stringify(result.content).includes(`fixture echo: ${text}`);
}

describe("acp proxy starts a crashed upstream again", () => {
  it("by default: after the crash, the server's tools answer again", async () => {
    const home = allowingHome();
    const client = await connectProxy(envFor(home), {
      name: "restart",
      args: ["proxy", "-u", FIXTURE, "-n", "fixture"],
    });
    try {
      expect(await echoAnswers(client, "before")).toBe(true);
      expect((await client.callTool({ name: "crash", arguments: {} })).isError).toBe(true);
      let attempt = 0;
      await expect.poll(() => echoAnswers(client, `after-${++attempt}`), { timeout: 30_000, interval: 250 }).toBe(true);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("not with proxy.restart_upstreams: false", async () => {
    const home = allowingHome();
    const config = join(home, "config.yml");
    writeFileSync(
      config,
      `version: "1"\ndefaults:\n  policy: ${join(home, "policy.yml")}\nproxy:\n  restart_upstreams: false\n`,
    );
    const client = await connectProxy(envFor(home), {
      name: "no-restart",
      args: ["proxy", "--config", config, "-u", FIXTURE, "-n", "fixture"],
    });
    try {
      expect((await client.callTool({ name: "crash", arguments: {} })).isError).toBe(true);
      // the list change the stop sends comes before this: the tool is gone, and stays gone
      await expect.poll(async () => (await client.listTools()).tools.length, { timeout: 10_000 }).toBe(0);
    } finally {
      await client.close();
    }
  }, 60_000);
});
