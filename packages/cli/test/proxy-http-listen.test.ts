import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const REPO = fileURLToPath(new URL("../../..", import.meta.url));
const ACP = join(REPO, "packages/cli/bin/acp.js");
const EVERYTHING = join(REPO, "node_modules/.bin/mcp-server-everything");
const WARNING = "acp proxy: warning: serving on 0.0.0.0 without TLS: the bearer token and every call and result";
const root = tempRoot("proxy-clear-text");
afterAll(root.cleanup);

/** Runs `acp proxy --http 0 ARGS` until it says where it listens, then stops it; its stderr. */
async function startedHttpProxy(args: string[]): Promise<string> {
  const env = {
    ...envFor(fixtureHome(root.dir).home),
    PATH: process.env["PATH"] ?? "",
    ACP_PROXY_TOKEN: randomBytes(32).toString("hex"),
  };
  const child = spawn(process.execPath, [ACP, "proxy", "--http", "0", "--upstream", EVERYTHING, ...args], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const closed = new Promise<void>((resolve) => child.stderr.once("close", resolve));
  await new Promise<void>((resolve, reject) => {
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      // a warning comes before the listening line: once that is read, every line before it is too
      if (stderr.includes("(HTTP+SSE)\n")) resolve();
    });
    child.on("exit", () => reject(new Error(`exited before it listened:\n${stderr}`)));
  });
  child.kill("SIGTERM");
  await closed;
  return stderr;
}

describe("acp proxy --http beyond loopback warns that it serves plain HTTP", () => {
  it("--bind 0.0.0.0: the token and every call cross the network in clear text; it says what to do", async () => {
    const stderr = await startedHttpProxy(["--bind", "0.0.0.0", "--insecure-plain-http"]);
    expect(stderr).toContain(WARNING);
    expect(stderr).toContain("put a TLS-terminating proxy in front and give its origin with --public-url https://…");
  });

  it("on loopback, or behind an https public URL, there is nothing to warn about", async () => {
    expect(await startedHttpProxy([])).not.toContain("without TLS");
    const behind = await startedHttpProxy(["--bind", "0.0.0.0", "--public-url", "https://mcp.example.com"]);
    expect(behind).not.toContain("without TLS");
  });
});

describe("acp proxy --http beyond loopback over plain HTTP", () => {
  it("does not start without TLS in front or --insecure-plain-http (exit 1), before any upstream starts", async () => {
    const env = {
      ...envFor(fixtureHome(root.dir).home),
      PATH: process.env["PATH"] ?? "",
      ACP_PROXY_TOKEN: randomBytes(32).toString("hex"),
    };
    for (const extra of [[], ["--public-url", "http://mcp.example.com"]]) {
      const out = await runCli(["proxy", "--http", "0", "--bind", "0.0.0.0", ...extra, "-u", "/nonexistent/server"], {
        env,
      });
      expect(out.code).toBe(1);
      expect(out.stderr).toContain(
        "refusing to listen on `0.0.0.0` over plain HTTP: the bearer token and every call and result would cross " +
          "the network in clear text; keep --bind 127.0.0.1 behind a TLS-terminating proxy (--public-url https://…)",
      );
      expect(out.stderr).toContain("or accept the risk on a network you trust with --insecure-plain-http");
      expect(out.stderr).not.toContain("upstream `server` failed");
      expect(out.stderr).not.toContain("listening on");
    }
  });
});

describe("acp proxy --http on a port in use", () => {
  it("exits 1 saying the port is taken and how to pick another, as acp serve does", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const out = await runCli(["proxy", "--http", String(port), "--upstream", EVERYTHING], {
        env: { ...envFor(fixtureHome(root.dir).home), PATH: process.env["PATH"] ?? "" },
      });
      expect(out.code).toBe(1);
      expect(out.stderr).toContain(
        `acp: cannot listen on \`127.0.0.1:${port}\`: EADDRINUSE (the port is already in use: another acp proxy? ` +
          "pick another with --http PORT, or --http 0 for a free one)",
      );
    } finally {
      taken.close();
    }
  });
});
