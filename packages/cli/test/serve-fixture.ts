/** `acp serve` run in-process for the CLI tests: a fresh home with the starter policy, removed after each test. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach } from "vitest";
import { STARTER_POLICY } from "@acp/store";
import { registerServe, type ServeReady } from "../src/commands/serve.js";
import type { CliContext } from "../src/context.js";

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

/** A home with the starter policy only, removed after the test. */
export function freshHome(): string {
  const home = mkdtempSync(join(tmpdir(), "acp-serve-cli-"));
  homes.push(home);
  writeFileSync(join(home, "policy.yml"), STARTER_POLICY);
  return home;
}

/** Runs `acp serve ARGS` in-process until `stop` resolves; resolves `ready` once it listens. */
export function startServe(home: string, args: string[], env: Record<string, string> = {}) {
  let stderr = "";
  let stdout = "";
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  let onReady!: (ready: ServeReady) => void;
  const ready = new Promise<ServeReady>((resolve) => (onReady = resolve));
  const ctx: CliContext = {
    io: {
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: (s: string) => (stderr += s) },
      readStdin: () => Promise.resolve(""),
      stdinIsTTY: false,
      env: { HOME: "/nonexistent-home", ACP_HOME: home, ...env },
      cwd: home,
      now: () => new Date(),
    },
    exitCode: 0,
  };
  const program = new Command("acp").exitOverride();
  registerServe(program, ctx, { onReady, stopped: () => stopped });
  const done = program.parseAsync(["node", "acp", "serve", ...args]);
  return { ready, stop, done, output: () => ({ stdout, stderr }) };
}

/** The error `acp serve ARGS` stops with before it listens (null if it did not fail). */
export async function serveFailure(
  home: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ message: string; exitCode?: number } | null> {
  return (await startServe(home, args, env).done.then(
    () => null,
    (e: unknown) => e,
  )) as { message: string; exitCode?: number } | null;
}
