import { spawn } from "node:child_process";
import { EventEmitter, once } from "node:events";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { endOnClosedPipe, type PipedProcess } from "../src/closed-pipe.js";

const ACP = join(fileURLToPath(new URL("../../..", import.meta.url)), "packages/cli/bin/acp.js");

/** Runs `acp ARGS` with its stdout closed before it writes anything (the reader already went away). */
async function withClosedStdout(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [ACP, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.destroy();
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stderr };
}

function fakeProcess(sigtermListeners: number): PipedProcess & { exits: unknown[]; sigterms: number } {
  const fake = {
    stdout: new EventEmitter(),
    stderr: new EventEmitter(),
    exitCode: undefined as number | string | undefined,
    exits: [] as unknown[],
    sigterms: 0,
    listenerCount: () => sigtermListeners,
    emit: () => {
      fake.sigterms++;
      return true;
    },
    exit: (code?: number | string): never => {
      fake.exits.push(code);
      return undefined as never;
    },
  };
  return fake;
}

const epipe = Object.assign(new Error("write EPIPE"), { code: "EPIPE" });

describe("acp with a closed stdout (`acp … | head`)", () => {
  it("ends quietly with its own exit code instead of dying on an unhandled EPIPE", async () => {
    const help = await withClosedStdout(["proxy", "--help"]);
    expect(help.stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(help.code).toBe(0);
    const usage = await withClosedStdout(["policy", "simulate"]);
    expect(usage.stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(usage.code).toBe(2);
  }, 30_000);

  it("stops a long-running command through its SIGTERM path, once; any other command exits", () => {
    const serving = fakeProcess(1);
    endOnClosedPipe(serving);
    serving.stdout.emit("error", epipe);
    serving.stdout.emit("error", Object.assign(new Error("destroyed"), { code: "ERR_STREAM_DESTROYED" }));
    expect(serving.sigterms).toBe(1);
    expect(serving.exits).toEqual([]);
    const oneShot = fakeProcess(0);
    oneShot.exitCode = 3;
    endOnClosedPipe(oneShot);
    oneShot.stdout.emit("error", epipe);
    expect(oneShot.exits).toEqual([3]);
  });

  it("still throws a write error that is not a closed pipe, and ignores a closed stderr", () => {
    const proc = fakeProcess(0);
    endOnClosedPipe(proc);
    expect(() => proc.stdout.emit("error", Object.assign(new Error("disk full"), { code: "ENOSPC" }))).toThrow(
      "disk full",
    );
    expect(() => proc.stderr.emit("error", epipe)).not.toThrow();
    expect(proc.exits).toEqual([]);
  });
});
