/**
 * A command whose code fails to load (a broken or half-updated install: a module missing, a syntax error)
 * is an error `acp` says as one, on one line with its usual exit code, and as JSON with `--json`: not Node's
 * stack trace. The built acp runs with a module hook that fails to load one command's module.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { moduleHook } from "./module-hook.js";

// bin/acp.js runs the bundle; dist/entry.js the same program's modules one by one
const ACP = fileURLToPath(new URL("../bin/acp.js", import.meta.url));
const ENTRY = fileURLToPath(new URL("../dist/entry.js", import.meta.url));
const root = tempRoot("command-load-failure");
afterAll(root.cleanup);

const register = moduleHook(
  root.dir,
  "broken-pending",
  `  const resolved = await next(specifier, context);\n` +
    // the command's module, or its chunk in the bundle bin/acp.js runs
    `  if (/\\/commands\\/pending\\.js$|\\/bundle\\/pending-\\w+\\.js$/.test(resolved.url)) throw new Error("Cannot find module 'pending.js' (test)");\n` +
    `  return resolved;`,
);

function acp(
  program: string,
  args: readonly string[],
  home: string,
): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, ["--import", register, program, ...args], {
    env: { ...process.env, ...envFor(home) },
    encoding: "utf8",
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe.each([
  ["bundled (bin/acp.js)", ACP],
  ["module by module (dist/entry.js)", ENTRY],
])("a command whose code cannot be loaded, %s", (_, program) => {
  const { home } = fixtureHome(root.dir);

  it("is said on one line (exit 1), not as a stack trace", () => {
    const run = acp(program, ["pending"], home);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe("acp: internal error: Cannot find module 'pending.js' (test)\n");
    expect(run.stdout).toBe("");
  });

  it("is a JSON error with --json", () => {
    const run = acp(program, ["pending", "--json"], home);
    expect(run.status).toBe(1);
    expect(JSON.parse(run.stdout)).toEqual({
      error: { message: "internal error: Cannot find module 'pending.js' (test)", exit_code: 1 },
    });
  });

  it("leaves the other commands working", () => {
    const run = acp(program, ["--version"], home);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("an acp whose bundle is missing or broken", () => {
  it("says it is not built (exit 1) when dist/bundle was never made", () => {
    const pkg = join(root.dir, "unbuilt");
    mkdirSync(join(pkg, "bin"), { recursive: true });
    copyFileSync(ACP, join(pkg, "bin", "acp.js"));
    const run = spawnSync(process.execPath, [join(pkg, "bin", "acp.js"), "--version"], { encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stderr).toBe("acp: not built: run `npm run build` in the ACP checkout (or `npm install`)\n");
    expect(run.stdout).toBe("");
  });

  it("does not take another missing module for a missing build: that one is thrown as it is", () => {
    const pkg = join(root.dir, "broken");
    mkdirSync(join(pkg, "bin"), { recursive: true });
    mkdirSync(join(pkg, "dist", "bundle"), { recursive: true });
    copyFileSync(ACP, join(pkg, "bin", "acp.js"));
    writeFileSync(join(pkg, "dist", "bundle", "entry.js"), 'import "./chunk-gone.js";\n');
    const run = spawnSync(process.execPath, [join(pkg, "bin", "acp.js"), "--version"], { encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("chunk-gone.js");
    expect(run.stderr).not.toContain("not built");
  });
});
