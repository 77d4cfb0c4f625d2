/**
 * A command whose code fails to load (a broken or half-updated install: a module missing, a syntax error)
 * is an error `acp` says as one, on one line with its usual exit code, and as JSON with `--json`: not Node's
 * stack trace. The built acp runs with a module hook that fails to load one command's module.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { moduleHook } from "./module-hook.js";

const ACP = fileURLToPath(new URL("../bin/acp.js", import.meta.url));
const root = tempRoot("command-load-failure");
afterAll(root.cleanup);

const register = moduleHook(
  root.dir,
  "broken-pending",
  `  const resolved = await next(specifier, context);\n` +
    `  if (resolved.url.endsWith("/commands/pending.js")) throw new Error("Cannot find module 'pending.js' (test)");\n` +
    `  return resolved;`,
);

function acp(args: readonly string[], home: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, ["--import", register, ACP, ...args], {
    env: { ...process.env, ...envFor(home) },
    encoding: "utf8",
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe("a command whose code cannot be loaded", () => {
  const { home } = fixtureHome(root.dir);

  it("is said on one line (exit 1), not as a stack trace", () => {
    const run = acp(["pending"], home);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe("acp: internal error: Cannot find module 'pending.js' (test)\n");
    expect(run.stdout).toBe("");
  });

  it("is a JSON error with --json", () => {
    const run = acp(["pending", "--json"], home);
    expect(run.status).toBe(1);
    expect(JSON.parse(run.stdout)).toEqual({
      error: { message: "internal error: Cannot find module 'pending.js' (test)", exit_code: 1 },
    });
  });

  it("leaves the other commands working", () => {
    const run = acp(["--version"], home);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});
