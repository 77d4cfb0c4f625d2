import { createServer } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

/**
 * An upstream URL nothing listens on: the proxy says which address it tried and why it failed
 * (`connect ECONNREFUSED …`), not a bare `fetch failed`, and never a password given in the URL.
 */
const root = tempRoot("proxy-unreachable-upstream");
afterAll(root.cleanup);

/** A loopback port nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

describe("acp proxy with an upstream URL nothing listens on", () => {
  it("names the address and the cause (not a bare `fetch failed`)", async () => {
    const { home } = fixtureHome(root.dir);
    const port = await closedPort();
    const out = await runCli(["proxy", "--upstream", `http://127.0.0.1:${port}/mcp`, "--name", "remote"], {
      env: envFor(home),
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(
      new RegExp(
        `upstream \`remote\` failed: http://127\\.0\\.0\\.1:${port}/mcp: .*ECONNREFUSED 127\\.0\\.0\\.1:${port}`,
      ),
    );
  });

  it("refuses a password written into the URL before starting (usage), never printing it", async () => {
    const { home } = fixtureHome(root.dir);
    const port = await closedPort();
    const out = await runCli(
      ["proxy", "--upstream", `http://agent:s3cret-pass@127.0.0.1:${port}/mcp`, "--name", "remote"],
      { env: envFor(home) },
    );
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("carries a user or password");
    expect(out.stderr).not.toContain("s3cret-pass");
  });

  it("nor a token written as the URL's user, nor a password that is no valid percent-encoding", async () => {
    const { home } = fixtureHome(root.dir);
    const port = await closedPort();
    for (const auth of ["ghp_t0kenAsUser", "agent:s3cret%zz-pass"]) {
      const out = await runCli(["proxy", "--upstream", `http://${auth}@127.0.0.1:${port}/mcp`, "--name", "remote"], {
        env: envFor(home),
      });
      expect(out.code).toBe(2);
      expect(out.stderr).toContain("carries a user or password");
      expect(out.stderr).not.toContain("t0kenAsUser");
      expect(out.stderr).not.toContain("s3cret");
    }
  });
});

describe("acp proxy with an upstream command that is not on its PATH", () => {
  it("says the command was not found on the PATH it was given, and what to do", async () => {
    const { home } = fixtureHome(root.dir);
    const out = await runCli(["proxy", "--upstream", "no-such-mcp-server-cmd /tmp"], {
      env: { ...envFor(home), PATH: "/usr/bin:/bin" },
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(
      "upstream `no-such-mcp-server-cmd` failed: spawn no-such-mcp-server-cmd ENOENT (no command `no-such-mcp-server-cmd` on the PATH acp was started with: check its name, or give its full path)",
    );
  });
});
