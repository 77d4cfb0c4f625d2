import { existsSync, readdirSync, readFileSync } from "node:fs";
import type * as Fs from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { acquireFileLock, FileLock } from "../../src/audit/index.js";
import { tempHomes } from "./audit-fixture.js";

// a file system without hard links: every link fails with EPERM (as on FAT)
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof Fs>();
  return {
    ...fs,
    linkSync: () => {
      throw Object.assign(new Error("EPERM: operation not permitted, link"), { code: "EPERM" });
    },
  };
});

const homes = tempHomes();
afterAll(homes.cleanup);

describe("FileLock where hard links are not supported", () => {
  it("takes the lock by creating the lock file, exclusive as before, and leaves no holder file", async () => {
    const dir = homes.make();
    const path = join(dir, "x.lock");
    const lock = new FileLock(path);
    const release = await lock.acquire();
    expect(readFileSync(path, "utf8").split("\n").slice(0, 2)).toEqual([String(process.pid), hostname()]);
    await expect(acquireFileLock(path, { timeoutMs: 30 })).rejects.toMatchObject({ code: "audit_lock_timeout" });
    await expect(new FileLock(path, { timeoutMs: 30 }).acquire()).rejects.toMatchObject({
      code: "audit_lock_timeout",
    });
    release();
    expect(existsSync(path)).toBe(false);
    (await lock.acquire())();
    lock.close();
    expect(readdirSync(dir).filter((name) => name.startsWith("x.lock"))).toEqual([]);
  });
});
