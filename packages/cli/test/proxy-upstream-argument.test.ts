import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./run.js";
import { tempRoot } from "./home-fixture.js";

// What `acp proxy --upstream VALUE` says about a value it cannot use, before anything starts: an address
// is often pasted with its credentials in it, and stderr is the MCP client's log file.

const root = tempRoot("proxy-upstream-argument");
afterAll(root.cleanup);
const env = { ACP_HOME: join(root.dir, "no-home"), HOME: root.dir };

describe("acp proxy --upstream with a value it cannot use", () => {
  it("names a malformed URL without its user, password, query values or fragment (usage)", async () => {
    const url = "https://ghp_usertoken:s3cr3t-pass@mcp.example.com:99999/mcp?api_key=sk_live_abcdef&v=1#tok_frag";
    const out = await runCli(["proxy", "--upstream", url], { env });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("upstream url `https://…@mcp.example.com:99999/mcp?api_key=…&v=…#…` is not a url");
    for (const secret of ["ghp_usertoken", "s3cr3t-pass", "sk_live_abcdef", "tok_frag"]) {
      expect(out.stderr).not.toContain(secret);
    }
  });

  it("refuses a URL of another scheme (a mistyped https) as a URL, not as a command to spawn (usage)", async () => {
    for (const url of ["htps://mcp.example.com/mcp", "ws://127.0.0.1:3001/mcp"]) {
      const out = await runCli(["proxy", "--upstream", url], { env });
      expect(out.code, url).toBe(2);
      expect(out.stderr).toContain(`upstream url \`${url}\` must be http or https`);
      expect(out.stderr).not.toContain("ENOENT");
    }
  });

  it("says what to do with a user or password in a URL, which fetch refuses to send (it names neither)", async () => {
    const port = await closedPort();
    const out = await runCli(["proxy", "--upstream", `http://agent:s3cret-pass@127.0.0.1:${port}/mcp`], { env });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(
      "carries a user or password, which fetch refuses to send: keep it in the vault and send it as a header, " +
        "`credentials:` with `inject: { header: Authorization, format: … }` (acp docs reference/vault)",
    );
    expect(out.stderr).not.toContain("s3cret-pass");
  });

  it("names the glob it refuses in a command", async () => {
    const out = await runCli(["proxy", "--upstream", "node server.js *.json"], { env });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("upstream command `node server.js *.json`: a glob `*.json` is not supported");
  });
});

/** A loopback port nothing listens on (one just closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === "object" && address !== null ? address.port : 0;
}
