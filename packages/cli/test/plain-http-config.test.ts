import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { checkServeConfig } from "../src/wiring/serve-config.js";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { freshHome, serveFailure, startServe } from "./serve-fixture.js";

const REPO = fileURLToPath(new URL("../../..", import.meta.url));
const ACP = join(REPO, "packages/cli/bin/acp.js");
const EVERYTHING = join(REPO, "node_modules/.bin/mcp-server-everything");
const root = tempRoot("plain-http-config");
afterAll(root.cleanup);

const TOKEN = { ACP_BRIDGE_TOKEN: "cli-token-0123456789abcdef" };

/** A home for `acp serve` whose config.yml holds `serve:` with these lines. */
function serveHome(serveLines: string): string {
  const home = freshHome();
  writeFileSync(join(home, "config.yml"), `version: "1"\nserve:\n${serveLines}`);
  return home;
}

describe("serve.insecure_plain_http", () => {
  it("is checked with the rest of serve: (true or false; anything else is a problem naming it)", () => {
    expect(checkServeConfig({ serve: { insecure_plain_http: true } })).toEqual({
      ok: true,
      value: { insecurePlainHttp: true },
    });
    expect(checkServeConfig({ serve: { insecure_plain_http: false } })).toEqual({
      ok: true,
      value: { insecurePlainHttp: false },
    });
    expect(checkServeConfig({ serve: { insecure_plain_http: "yes" } })).toEqual({
      ok: false,
      problems: ["serve.insecure_plain_http: `yes` is not true or false"],
    });
  });

  it("a serve.bind beyond loopback over plain HTTP is refused without it (exit 2), as --bind is", async () => {
    const failure = await serveFailure(serveHome('  bind: "0.0.0.0"\n'), ["--port", "0"], TOKEN);
    expect(failure?.exitCode).toBe(2);
    expect(failure?.message).toContain("--bind `0.0.0.0` is beyond loopback over plain HTTP");
    expect(failure?.message).toContain("with --insecure-plain-http (or serve.insecure_plain_http: true)");
  });

  it("true accepts the risk as --insecure-plain-http does: it listens beyond loopback and warns", async () => {
    const serve = startServe(serveHome('  bind: "0.0.0.0"\n  insecure_plain_http: true\n'), ["--port", "0"], TOKEN);
    const ready = await serve.ready;
    serve.stop();
    await serve.done;
    expect(ready.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    expect(serve.output().stderr).toContain("warning: serving on 0.0.0.0 without TLS");
  });

  it("a value that is not true or false stops the start (exit 4), never read as accepting the risk", async () => {
    const failure = await serveFailure(
      serveHome('  bind: "0.0.0.0"\n  insecure_plain_http: "yes"\n'),
      ["--port", "0"],
      TOKEN,
    );
    expect(failure?.exitCode).toBe(4);
    expect(failure?.message).toContain("serve.insecure_plain_http: `yes` is not true or false");
  });

  it("acp doctor checks it as acp serve does: its serve check fails on a value that is not true or false", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "config.yml"), 'version: "1"\nserve:\n  insecure_plain_http: "yes"\n');
    const out = await runCli(["doctor", "--json"], { env: envFor(home) });
    expect(out.code).toBe(1);
    const { checks } = JSON.parse(out.stdout) as { checks: { name: string; status: string; detail: string }[] };
    expect(checks.filter((c) => c.name === "serve").map((c) => [c.status, c.detail])).toEqual([
      ["fail", "config.yml: serve.insecure_plain_http: `yes` is not true or false"],
    ]);
  });
});

/** An `acp proxy --config FILE` setup whose `proxy:` section holds these lines. */
function proxySetup(proxyLines: string): { env: Record<string, string>; config: string } {
  const { home } = fixtureHome(root.dir);
  const config = join(home, "proxy-config.yml");
  writeFileSync(config, `version: "1"\nproxy:\n${proxyLines}`);
  const env = { ...envFor(home), PATH: process.env["PATH"] ?? "", ACP_PROXY_TOKEN: randomBytes(32).toString("hex") };
  return { env, config };
}

describe("proxy.insecure_plain_http", () => {
  it("a proxy.bind beyond loopback over plain HTTP is refused without it (exit 1), naming the key", async () => {
    const { env, config } = proxySetup('  bind: "0.0.0.0"\n');
    const out = await runCli(["proxy", "--http", "0", "--config", config, "-u", "/nonexistent/server"], { env });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("refusing to listen on `0.0.0.0` over plain HTTP");
    expect(out.stderr).toContain("with --insecure-plain-http (or proxy.insecure_plain_http: true)");
  });

  it("true accepts the risk as --insecure-plain-http does: it listens beyond loopback and warns", async () => {
    const { env, config } = proxySetup('  bind: "0.0.0.0"\n  insecure_plain_http: true\n');
    const child = spawn(process.execPath, [ACP, "proxy", "--http", "0", "--config", config, "-u", EVERYTHING], {
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    const closed = new Promise<void>((resolve) => child.stderr.once("close", resolve));
    await new Promise<void>((resolve, reject) => {
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
        if (stderr.includes("(HTTP+SSE)\n")) resolve();
      });
      child.on("exit", () => reject(new Error(`exited before it listened:\n${stderr}`)));
    });
    child.kill("SIGTERM");
    await closed;
    expect(stderr).toMatch(/listening on http:\/\/0\.0\.0\.0:\d+\/mcp/);
    expect(stderr).toContain("acp proxy: warning: serving on 0.0.0.0 without TLS");
  });

  it("a value that is not true or false stops the start (exit 4) at FILE:LINE:COL", async () => {
    const { env, config } = proxySetup('  bind: "0.0.0.0"\n  insecure_plain_http: "yes"\n');
    const out = await runCli(["proxy", "--http", "0", "--config", config, "-u", "/nonexistent/server"], { env });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain(`${config}:4:24: \`proxy.insecure_plain_http\` must be true or false`);
  });
});
