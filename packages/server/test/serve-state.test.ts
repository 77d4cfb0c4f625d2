/**
 * `$ACP_HOME/serve.json` names the running `acp serve`. Two services on one home overlap — a restart that
 * starts the new process before the old one stops, or two nodes on one machine sharing the home — and the
 * one stopping removed the file the other had written: `acp console-link` then said no service was running
 * (and `acp pending` lost its PostgreSQL hint) while one was. A service now removes the file only when it
 * still names this process.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readServeState, removeServeState, writeServeState } from "@acp/server";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), "acp-serve-state-"));
  dirs.push(dir);
  return dir;
}

const state = (pid: number) => ({ url: "http://127.0.0.1:8787", pid, started_at: "2026-03-02T10:00:00.000Z" });

describe("serve.json when two services overlap on one home", () => {
  it("is left alone by a stopping service when another service wrote it since", () => {
    const dir = home();
    writeServeState(dir, state(process.pid)); // the old service
    writeServeState(dir, state(process.pid + 1)); // the new one, started before the old one stops
    removeServeState(dir); // the old one stops
    expect(readServeState(dir)?.pid).toBe(process.pid + 1);
  });

  it("is removed by the service it names", () => {
    const dir = home();
    writeServeState(dir, state(process.pid));
    removeServeState(dir);
    expect(readServeState(dir)).toBeNull();
    removeServeState(dir); // nothing there: nothing to do
  });
});

describe("serve.json is read as the home's other files are", () => {
  it("a file larger than 16 KiB is not read: no service", () => {
    const dir = home();
    const padded = `${JSON.stringify(state(process.pid))}${" ".repeat(64 * 1024)}\n`;
    writeFileSync(join(dir, "serve.json"), padded);
    expect(readServeState(dir)).toBeNull();
  });
});
