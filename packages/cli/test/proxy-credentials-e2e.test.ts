import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const CANARY = "canary-7f3a9c1e-secret-value-0042";

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe("credentials: injected into the accepted call only, and nowhere else", () => {
  const root = tempRoot("proxy-credentials");
  let home = "";
  let client: Client;
  let stderr = "";

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/cli/dist/wiring/credentials.js"))) {
      await promisify(execFile)("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    }
    ({ home } = fixtureHome(root.dir));
    const env = envFor(home);
    expect((await runCli(["vault", "set", "ECHO_TOKEN"], { env, stdin: `${CANARY}\n` })).code).toBe(0);
    writeFileSync(
      join(home, "policy.yml"),
      'version: "1"\ndefault_action: deny\nrules:\n  - id: echo\n    match: { tool: echo }\n    action: allow\n',
    );
    writeFileSync(
      join(home, "config.yml"),
      `credentials:\n  - secret: ECHO_TOKEN\n    server: everything\n    tool: echo\n    argument: message\n`,
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ACP, "proxy", "--upstream", EVERYTHING, "--name", "everything"],
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    client = new Client({ name: "credentials-agent", version: "1.0.0" });
    await client.connect(transport);
  }, 120_000);

  afterAll(() => {
    root.cleanup();
  });

  it("the upstream receives the secret, but what comes back to the agent has it redacted", async () => {
    // server-everything's echo returns the message it received: the injected secret, if unredacted
    const result = await client.callTool({ name: "echo", arguments: { message: "placeholder" } });
    const text = JSON.stringify(result.content);
    expect(text).not.toContain(CANARY);
    expect(text).toContain("[REDACTED]");
  });

  it("leaves no trace of the secret in the audit, the home's plain files, or the proxy's log", async () => {
    await client.close();
    expect(stderr).not.toContain(CANARY);
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(audit).toContain('"credential_injected"');
    expect(audit).toContain("ECHO_TOKEN");
    for (const file of filesUnder(home)) expect(readFileSync(file).includes(CANARY)).toBe(false);
  });
});
