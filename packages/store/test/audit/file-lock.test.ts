import { spawnSync } from "node:child_process";
import { existsSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { acquireFileLock } from "../../src/audit/index.js";
import { tempHomes } from "./audit-fixture.js";

const homes = tempHomes();
afterAll(homes.cleanup);

function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
  return Number(child.stdout.toString());
}

describe("file lock", () => {
  it("is exclusive within and across holders until released", async () => {
    const path = join(homes.make(), "x.lock");
    const release = await acquireFileLock(path);
    await expect(acquireFileLock(path, { timeoutMs: 50 })).rejects.toMatchObject({ code: "audit_lock_timeout" });
    release();
    expect(existsSync(path)).toBe(false);
    const again = await acquireFileLock(path, { timeoutMs: 50 });
    again();
  });

  it("breaks a lock left by a process that died", async () => {
    const path = join(homes.make(), "x.lock");
    writeFileSync(path, `${deadPid()}\n${hostname()}\nold-token\n`);
    const release = await acquireFileLock(path, { timeoutMs: 1000 });
    release();
  });

  it("breaks a lock older than the stale age even when its pid looks alive", async () => {
    const path = join(homes.make(), "x.lock");
    writeFileSync(path, `${process.pid}\n${hostname()}\nforeign\n`);
    const old = new Date(Date.now() - 120_000);
    utimesSync(path, old, old);
    const release = await acquireFileLock(path, { timeoutMs: 1000, staleMs: 60_000 });
    release();
  });

  it("waits for a live holder on this host instead of breaking its lock", async () => {
    const path = join(homes.make(), "x.lock");
    writeFileSync(path, `${process.pid}\n${hostname()}\nlive\n`);
    await expect(acquireFileLock(path, { timeoutMs: 30 })).rejects.toMatchObject({ code: "audit_lock_timeout" });
    expect(existsSync(path)).toBe(true);
  });
});
