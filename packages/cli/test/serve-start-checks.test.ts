import { spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { fixtureHome, tempRoot } from "./home-fixture.js";
import { freshHome, serveFailure, startServe } from "./serve-fixture.js";

const ACP = join(fileURLToPath(new URL("../../..", import.meta.url)), "packages/cli/bin/acp.js");
const root = tempRoot("serve-flags");
afterAll(root.cleanup);

/** `acp serve ARGS` as a person runs it: an `acp init` home with an encrypted key, no ACP_PASSPHRASE, no terminal. */
function serve(args: string[], env: Record<string, string> = {}): { code: number | null; stderr: string } {
  const { home } = fixtureHome(root.dir);
  const out = spawnSync(process.execPath, [ACP, "serve", ...args], {
    env: { PATH: process.env["PATH"] ?? "", HOME: "/nonexistent-home", ACP_HOME: home, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
  });
  return { code: out.status, stderr: out.stderr };
}

describe("acp serve checks its flags before it opens the key", () => {
  it.each([
    [["--port", "abc"], "--port: `abc` is not a port (0 to 65535; 0 picks a free one)"],
    [["--port", "99999"], "--port: `99999` is not a port (0 to 65535; 0 picks a free one)"],
    [["--tls-cert", "cert.pem"], "--tls-cert and --tls-key go together"],
    [["--public-url", "https://acp.example.com/console"], "--public-url:"],
    [["--bind", "0.0.0.0"], "--bind `0.0.0.0` is beyond loopback: set ACP_BRIDGE_TOKEN or serve.bearer_token first"],
  ])("serve %j exits 2 naming the flag, not 1 for the passphrase nobody gave", (args, message) => {
    const out = serve(args);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(message);
    expect(out.stderr).not.toMatch(/passphrase/i);
  });

  it("beyond loopback with only an approvers' token says which token closes the API and how to make one", async () => {
    const failure = await serveFailure(freshHome(), ["--port", "0", "--bind", "0.0.0.0"], {
      ACP_APPROVER_TOKEN: "approver-token-0123456789abcdef",
    });
    expect(failure?.exitCode).toBe(2);
    expect(failure?.message).toContain("(or serve.agent_tokens.NAME; make one with `openssl rand -hex 32`");
    expect(failure?.message).toContain("the approvers' token does not close it");
    expect(failure?.message).toContain("or keep --bind 127.0.0.1 behind a reverse proxy (--public-url)");
  });

  it("refuses beyond loopback over plain HTTP, even with a token, before it opens the key or listens (exit 2)", () => {
    const token = { ACP_BRIDGE_TOKEN: "cli-token-0123456789abcdef" };
    for (const args of [
      ["--bind", "0.0.0.0"],
      ["--bind", "0.0.0.0", "--public-url", "http://acp.example.com"],
    ]) {
      const out = serve(["--port", "0", ...args], token);
      expect(out.code, out.stderr).toBe(2);
      expect(out.stderr).toContain(
        "--bind `0.0.0.0` is beyond loopback over plain HTTP: the bearer tokens, console sign-in links and " +
          "session cookies would cross the network in clear text; serve HTTPS (--tls-cert FILE --tls-key FILE)",
      );
      expect(out.stderr).toContain("or accept the risk on a network you trust with --insecure-plain-http");
      expect(out.stderr).not.toMatch(/passphrase|listening/i);
    }
    // TLS here, TLS ended in front (an https public URL), or the risk accepted: past this check, to the key
    for (const args of [
      ["--public-url", "https://acp.example.com"],
      ["--insecure-plain-http"],
      ["--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"],
    ]) {
      const out = serve(["--port", "0", "--bind", "0.0.0.0", ...args], token);
      expect(out.code, out.stderr).toBe(1);
      expect(out.stderr).not.toContain("plain HTTP");
    }
  });

  it("still asks for the passphrase when the flags are right (exit 1, key_passphrase_required)", () => {
    const out = serve(["--port", "0"]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("key_passphrase_required");
    // what to do where a service runs, and why it does not start degraded as acp proxy does
    expect(out.stderr).toContain("set ACP_PASSPHRASE in the service's environment");
    expect(out.stderr).toContain("unlike acp proxy it does not start without it");
  });

  it("--stdio without the passphrase says to put it in the MCP client's env (exit 1), not to run in a terminal", () => {
    const out = serve(["--stdio"]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("key_passphrase_required");
    expect(out.stderr).toContain("put ACP_PASSPHRASE in the `env` of this command's entry in the MCP client's config");
    expect(out.stderr).toContain("hide the vault's values from the audit");
    expect(out.stderr).not.toContain("terminal");
  });
});

describe("acp serve --json", () => {
  it("prints one JSON object on stdout, and still says on stderr which tokens are missing", async () => {
    const home = freshHome();
    const run = startServe(home, ["--port", "0", "--json"]);
    await run.ready;
    run.stop();
    await run.done;
    const { stdout, stderr } = run.output();
    const printed = JSON.parse(stdout) as { console_link: string };
    expect(printed.console_link).toContain("/console/login?token=");
    expect(stderr).toContain("acp serve: no bearer token configured: the API answers loopback callers only");
    expect(stderr).toContain("acp serve: no approvers' token (ACP_APPROVER_TOKEN) configured");
  });
});

describe("acp serve on every interface", () => {
  it("gives links a browser and a client on this machine can open, not 0.0.0.0 (with --json too)", async () => {
    const env = { ACP_BRIDGE_TOKEN: "cli-token-0123456789abcdef" };
    const wide = ["--port", "0", "--bind", "0.0.0.0", "--insecure-plain-http"];
    const json = startServe(freshHome(), [...wide, "--json"], env);
    const { url } = await json.ready;
    json.stop();
    await json.done;
    const printed = JSON.parse(json.output().stdout) as Record<string, string>;
    const local = url.replace("//0.0.0.0:", "//127.0.0.1:");
    expect(printed).toMatchObject({ url, local_url: local, mcp: `${local}/mcp`, docs: `${local}/docs` });
    const text = startServe(freshHome(), wide, env);
    const ready = await text.ready;
    text.stop();
    await text.done;
    const shown = ready.url.replace("//0.0.0.0:", "//127.0.0.1:");
    expect(text.output().stdout).toContain(
      `acp serve: listening on ${ready.url} (every interface; on this machine ${shown}: API docs ${shown}/docs, MCP ${shown}/mcp)`,
    );
  });
});

describe("acp serve --tls-cert/--tls-key", () => {
  it("names files that are not a certificate and its key (exit 1) before it opens the state", async () => {
    const home = freshHome();
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
    writeFileSync(join(home, "key.pem"), privateKey.export({ type: "pkcs8", format: "pem" }));
    writeFileSync(join(home, "cert.pem"), "not a certificate\n");
    const failure = await serveFailure(home, ["--port", "0", "--tls-cert", "cert.pem", "--tls-key", "key.pem"]);
    // before: `cannot open the state in HOME: error:…:PEM routines::no start line`, after the state was opened
    expect(failure?.message).toContain(
      "--tls-cert `cert.pem` and --tls-key `key.pem` are not a certificate and its private key",
    );
    expect(failure?.message).toContain("give the PEM certificate (chain) and the unencrypted PEM private key");
    expect(failure?.exitCode).toBe(1);
    expect(existsSync(join(home, "state.db"))).toBe(false);
  });
});
