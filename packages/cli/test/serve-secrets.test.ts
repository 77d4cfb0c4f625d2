/** `acp serve` hides the vault's values from its audit chain, like the proxy does for the values it injects. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import { registerServe, type ServeReady } from "../src/commands/serve.js";
import type { CliContext } from "../src/context.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

const root = tempRoot("serve-secrets");
afterAll(root.cleanup);

const SECRET = "plain-vault-value-5b81d2";

function startServe(env: Record<string, string>) {
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  let onReady!: (ready: ServeReady) => void;
  const ready = new Promise<ServeReady>((resolve) => (onReady = resolve));
  const ctx: CliContext = {
    io: {
      stdout: { write: () => true },
      stderr: { write: () => true },
      readStdin: () => Promise.resolve(""),
      stdinIsTTY: false,
      env,
      cwd: env["ACP_HOME"] ?? "/",
      now: () => new Date(),
    },
    exitCode: 0,
  };
  const program = new Command("acp").exitOverride();
  registerServe(program, ctx, { onReady, stopped: () => stopped });
  const done = program.parseAsync(["node", "acp", "serve", "--port", "0"]);
  return { ready, stop, done };
}

describe("acp serve and the vault", () => {
  it("never writes a vault value sent in a request to audit.jsonl", async () => {
    const { home } = fixtureHome(root.dir);
    const env = envFor(home);
    expect((await runCli(["vault", "set", "API_KEY"], { env, stdin: `${SECRET}\n` })).code).toBe(0);
    const serve = startServe(env);
    const { url } = await serve.ready;
    const res = await fetch(`${url}/v1/decide`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tool: `lookup_${SECRET}`, agent: SECRET, arguments: { key: SECRET } }),
    });
    expect(res.status).toBe(200);
    serve.stop();
    await serve.done; // closing flushes the chain
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(audit).toContain('"tool":"lookup_[REDACTED]"');
    expect(audit).not.toContain(SECRET);
  });
});
