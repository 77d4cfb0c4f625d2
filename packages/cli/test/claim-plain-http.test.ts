import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { ClaimServer } from "@acp/claim";
import { serveClaim, type ClaimServeFlags } from "../src/commands/claim.js";
import type { CliContext } from "../src/context.js";
import { CliError } from "../src/exit-codes.js";
import { runCli } from "./run.js";
import { tempRoot } from "./home-fixture.js";

const root = tempRoot("claim-plain-http");
afterAll(root.cleanup);
let server: ClaimServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

let n = 0;
/** A fresh home, a context writing stderr to a string, and `acp claim serve FLAGS` run in-process. */
async function claimServe(
  flags: ClaimServeFlags,
): Promise<{ home: string; stderr: string; failure?: CliError; address?: string | undefined }> {
  const home = join(root.dir, `home-${++n}`);
  let stderr = "";
  const ctx: CliContext = {
    exitCode: 0,
    io: {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (stderr += s) },
      readStdin: () => Promise.resolve(""),
      stdinIsTTY: false,
      env: { ACP_HOME: home, HOME: home },
      cwd: home,
      now: () => new Date(),
    },
  };
  try {
    const started = await serveClaim(ctx, { port: "0", difficulty: "8", ...flags });
    server = started.server;
    const address = started.server.app.server.address();
    return { home, stderr, address: typeof address === "object" && address !== null ? address.address : undefined };
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    return { home, stderr, failure: err };
  }
}

const REFUSAL =
  "--bind `0.0.0.0` is beyond loopback over plain HTTP: the agents' bearer tokens, claim codes, preview links and " +
  "session cookies would cross the network in clear text; keep --bind 127.0.0.1 behind a TLS-terminating proxy " +
  "and say so with --tls";
const WARNING = "acp claim: warning: serving on 0.0.0.0 without TLS: the agents' bearer tokens, claim codes";

describe("acp claim serve beyond loopback over plain HTTP", () => {
  it("does not start (exit 2), before the database or the provider key is made, and says what to do", async () => {
    const out = await claimServe({ bind: "0.0.0.0" });
    expect(out.address).toBeUndefined();
    expect(out.failure?.exitCode).toBe(2);
    expect(out.failure?.message).toContain(REFUSAL);
    expect(out.failure?.message).toContain("or accept the risk on a network you trust with --insecure-plain-http");
    expect(existsSync(join(out.home, "claim", "provider.key"))).toBe(false);
    expect(existsSync(join(out.home, "state.db"))).toBe(false);
  });

  it("listens beyond loopback with TLS in front (--tls), without a warning", async () => {
    const out = await claimServe({ bind: "0.0.0.0", tls: true });
    expect(out.failure).toBeUndefined();
    expect(out.address).toBe("0.0.0.0");
    expect(out.stderr).not.toContain("without TLS");
  });

  it("listens beyond loopback with --insecure-plain-http, warning that the secrets cross in clear text", async () => {
    const out = await claimServe({ bind: "0.0.0.0", insecurePlainHttp: true });
    expect(out.failure).toBeUndefined();
    expect(out.address).toBe("0.0.0.0");
    expect(out.stderr).toContain(WARNING);
    expect(out.stderr).toContain("put a TLS-terminating proxy in front and give --tls");
  });

  it("on loopback needs neither, and says nothing of TLS", async () => {
    const out = await claimServe({ bind: "127.0.0.1" });
    expect(out.address).toBe("127.0.0.1");
    expect(out.stderr).not.toContain("without TLS");
  });

  it("--help names the rule, the flag and the exit code", async () => {
    const out = await runCli(["claim", "serve", "--help"]);
    const help = out.stdout.replace(/\s+/g, " ");
    expect(help).toContain("--insecure-plain-http let --bind beyond loopback serve plain HTTP");
    expect(help).toContain("beyond loopback needs --tls or --insecure-plain-http");
    expect(help).toContain(
      "does not start (exit 2, before the database or the key is opened) unless --insecure-plain-http accepts that",
    );
  });
});
