/**
 * Starts the agent (directly for `none`, under `unshare` and the init for namespaced levels) in its own
 * process group, forwards SIGINT/SIGTERM/SIGHUP to the whole group, and reports how it ended: the exit
 * code, or 128 + the signal number when it was killed.
 */
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { constants as osConstants } from "node:os";
import type { Readable, Writable } from "node:stream";
import { createInterface } from "node:readline";
import { SandboxError, setupFailed, type SandboxErrorCode } from "./errors.js";
import { SANDBOX_INIT_SOURCE, type SandboxInitConfig } from "./init-source.js";
import { UNSHARE_FLAGS } from "./isolation.js";
import { SYSTEM_PATH } from "./find-executable.js";

/** Signals `acp run` passes on to the agent's process group. */
export const FORWARDED_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** Where signals come from (the `acp` process; a test may hand in an emitter). */
export interface SignalSource {
  on(signal: string, listener: () => void): unknown;
  off(signal: string, listener: () => void): unknown;
}

/** A started agent. */
export interface StartedAgent {
  readonly child: ChildProcess;
  /** The agent's stdout and stdin when MCP runs over its pipes. */
  readonly pipes: { readonly stdout: Readable; readonly stdin: Writable } | null;
  /** Resolves with the exit status (128 + signal when killed); never rejects. */
  readonly exited: Promise<number>;
}

/** How to start the agent. */
export interface SpawnAgentOptions {
  readonly mcpOverStdio: boolean;
  readonly signals: SignalSource;
  readonly unshare: string;
}

/** The agent's stdio; for the init also fd 3 (its status, to acp) and fd 4 (its config, from acp). */
function stdio(mcpOverStdio: boolean, init: boolean): StdioOptions {
  const io: StdioOptions = mcpOverStdio ? ["pipe", "pipe", "inherit"] : ["inherit", "inherit", "inherit"];
  return init ? [...io, "pipe", "pipe"] : io;
}

function watch(child: ChildProcess, options: SpawnAgentOptions): Promise<number> {
  const forward = FORWARDED_SIGNALS.map((signal) => {
    const listener = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // the group is gone already
      }
    };
    options.signals.on(signal, listener);
    return { signal, listener };
  });
  return new Promise((resolve) => {
    const done = (status: number): void => {
      for (const { signal, listener } of forward) options.signals.off(signal, listener);
      resolve(status);
    };
    child.once("error", () => done(127));
    child.once("exit", (code, signal) => done(code ?? 128 + (signal !== null ? osConstants.signals[signal] : 0)));
  });
}

/** Starts the agent with no isolation. */
export function spawnUnisolated(
  argv: readonly string[],
  env: Record<string, string>,
  cwd: string,
  options: SpawnAgentOptions,
): StartedAgent {
  const [command = "", ...args] = argv;
  const child = spawn(command, args, { env, cwd, stdio: stdio(options.mcpOverStdio, false), detached: true });
  const exited = watch(child, options);
  return { child, exited, pipes: pipesOf(child, options.mcpOverStdio) };
}

function pipesOf(child: ChildProcess, mcpOverStdio: boolean): StartedAgent["pipes"] {
  return mcpOverStdio && child.stdout !== null && child.stdin !== null
    ? { stdout: child.stdout, stdin: child.stdin }
    : null;
}

/** Starts `unshare` with the init; resolves once the init reports the sandbox ready (or throws why not). */
export async function spawnNamespaced(
  level: "netns" | "userns",
  config: SandboxInitConfig,
  options: SpawnAgentOptions,
): Promise<StartedAgent> {
  // the config goes on fd 4: on the command line, every user of the host would read the agent's environment
  const initArgs = ["--input-type=module", "-e", SANDBOX_INIT_SOURCE];
  const child = spawn(options.unshare, [...UNSHARE_FLAGS[level], "--", process.execPath, ...initArgs], {
    // the init's own tools (mount, ip) from the system's directories first (SYSTEM_PATH), never from a
    // directory on the agent's PATH that the agent could have written on an earlier run
    env: { PATH: `${SYSTEM_PATH}:${config.env["PATH"] ?? "/usr/local/sbin:/usr/local/bin"}` },
    cwd: "/",
    stdio: stdio(options.mcpOverStdio, true),
    detached: true,
  });
  const exited = watch(child, options);
  const configPipe = child.stdio[4] as Writable;
  configPipe.on("error", () => undefined); // an init that failed early: its status says why
  configPipe.end(JSON.stringify(config));
  const status = child.stdio[3] as Readable;
  const ready = await new Promise<{ ok: true } | { ok: false; code: SandboxErrorCode; message: string }>((resolve) => {
    let settled = false;
    const settle = (value: { ok: true } | { ok: false; code: SandboxErrorCode; message: string }): void => {
      if (!settled) resolve(value);
      settled = true;
    };
    createInterface({ input: status }).on("line", (line) => {
      try {
        const parsed = JSON.parse(line) as { type: string; code?: SandboxErrorCode; message?: string };
        if (parsed.type === "ready") settle({ ok: true });
        else settle({ ok: false, code: parsed.code ?? "sandbox_setup_failed", message: parsed.message ?? line });
      } catch {
        settle({ ok: false, code: "sandbox_setup_failed", message: `unexpected status \`${line.slice(0, 200)}\`` });
      }
    });
    void exited.then((code) =>
      settle({
        ok: false,
        code: "sandbox_setup_failed",
        message: `the sandbox exited before it was ready (status ${code})`,
      }),
    );
  });
  if (!ready.ok) {
    await killGroup(child, exited);
    throw ready.code === "sandbox_setup_failed"
      ? setupFailed(ready.message)
      : new SandboxError({ code: ready.code, message: ready.message });
  }
  return { child, exited, pipes: pipesOf(child, options.mcpOverStdio) };
}

/** Ends what is left of the agent's process group: SIGTERM, then SIGKILL after a grace period. */
export async function killGroup(child: ChildProcess, exited: Promise<number>, graceMs = 1000): Promise<void> {
  const signalGroup = (signal: NodeJS.Signals): boolean => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
      return true;
    } catch {
      return false;
    }
  };
  if (!signalGroup("SIGTERM")) return;
  await exited;
  await new Promise((resolve) => setTimeout(resolve, graceMs).unref());
  signalGroup("SIGKILL");
}
