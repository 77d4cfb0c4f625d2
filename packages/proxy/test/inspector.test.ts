import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACP, buildCli, ROOT, startAcpProxyHttp, type Started } from "./fixtures/conformance-harness.js";

/** The MCP Inspector's CLI mode (`mcp-inspector --cli` runs this package), a client nobody here wrote. */
const INSPECTOR_DIR = join(ROOT, "node_modules/@modelcontextprotocol/inspector-cli/build");
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");

const POLICY = `version: "1"
default_action: deny
rules:
  - id: echo-runs
    match: { tool: echo }
    action: allow
  - id: no-env
    match: { tool: get-env }
    action: deny
`;

interface Run {
  readonly code: number;
  readonly json: Record<string, unknown>;
  readonly stderr: string;
}

/**
 * Runs `mcp-inspector-cli --cli TARGET… --method …`. Its working directory is the package's own build
 * directory: the Inspector finds its package.json relative to the working directory.
 */
async function inspector(target: readonly string[], method: readonly string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const argv = [join(INSPECTOR_DIR, "cli.js"), "--cli", ...target, ...method];
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, argv, {
      cwd: INSPECTOR_DIR,
      env,
      timeout: 90_000,
    });
    return { code: 0, json: JSON.parse(stdout) as Record<string, unknown>, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    throw new Error(`the inspector failed (${String(e.code)}): ${e.stderr ?? ""}${e.stdout ?? ""}`);
  }
}

function text(result: Record<string, unknown>): string {
  const content = (result["content"] as { type: string; text?: string }[] | undefined) ?? [];
  return content.map((c) => c.text ?? "").join("\n");
}

describe("the MCP Inspector CLI as the agent's client of `acp proxy`", () => {
  const dir = mkdtempSync(join(tmpdir(), "acp-inspector-"));
  const policy = join(dir, "policy.yml");
  const env = { PATH: process.env["PATH"] ?? "", HOME: dir, ACP_HOME: join(dir, "acp") };
  const proxyCommand = [process.execPath, ACP, "proxy", "--upstream", EVERYTHING, "--name", "everything"];
  let http: Started | undefined;

  beforeAll(async () => {
    writeFileSync(policy, POLICY);
    await buildCli();
  }, 180_000);

  afterAll(async () => {
    await http?.stop();
  });

  describe("over stdio (the Inspector spawns `acp proxy --upstream server-everything`)", () => {
    const target = [...proxyCommand, "--policy", policy];

    it("lists the upstream's tools through the proxy", async () => {
      const run = await inspector(target, ["--method", "tools/list"], env);
      const names = (run.json["tools"] as { name: string }[]).map((t) => t.name);
      expect(names).toContain("echo");
      expect(names).toContain("get-env");
    }, 120_000);

    it("calls a tool the policy allows and gets the server's answer", async () => {
      const run = await inspector(
        target,
        ["--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hello from the inspector"],
        env,
      );
      expect(run.json["isError"]).not.toBe(true);
      expect(text(run.json)).toBe("Echo: hello from the inspector");
    }, 120_000);

    it("calls a tool the policy denies and gets the refusal, naming the rule", async () => {
      const run = await inspector(target, ["--method", "tools/call", "--tool-name", "get-env"], env);
      expect(run.json["isError"]).toBe(true);
      expect(text(run.json)).toMatch(/^refused by policy rule `no-env`: rule `no-env` matched: deny/);
      // nothing of the server's environment came back
      expect(JSON.stringify(run.json)).not.toContain("PATH");
    }, 120_000);
  });

  describe("over streamable HTTP (`acp proxy --http`)", () => {
    it("the same allow and refusal through the Inspector's HTTP transport", async () => {
      http = await startAcpProxyHttp(EVERYTHING, "everything", policy);
      const target = [http.url, "--transport", "http"];
      const allowed = await inspector(
        target,
        ["--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=over http"],
        env,
      );
      expect(text(allowed.json)).toBe("Echo: over http");
      const refused = await inspector(target, ["--method", "tools/call", "--tool-name", "get-env"], env);
      expect(refused.json["isError"]).toBe(true);
      expect(text(refused.json)).toContain("refused by policy rule `no-env`");
    }, 120_000);
  });
});
