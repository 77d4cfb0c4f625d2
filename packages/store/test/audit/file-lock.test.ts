import { spawnSync } from "node:child_process";
import {
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { acquireFileLock, FileLock, openAuditLog } from "../../src/audit/index.js";
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

  it("waits on while the lock changes hands, and gives up only when one take lasts the whole timeout", async () => {
    const path = join(homes.make(), "x.lock");
    // live holders taking turns (a new token each time), never leaving the lock free: others making progress
    let turn = 0;
    const take = (): void => writeFileSync(path, `${process.pid}\n${hostname()}\nturn-${turn++}\n`);
    take();
    const turns = setInterval(take, 40);
    const waiting = acquireFileLock(path, { timeoutMs: 600 });
    let settled = false;
    void waiting.then(
      () => (settled = true),
      () => (settled = true),
    );
    // three timeouts' worth of turns: before, the wait gave up after the first 600 ms
    while (turn < 50) await new Promise((resolve) => setTimeout(resolve, 40));
    expect(settled).toBe(false);
    clearInterval(turns);
    unlinkSync(path);
    const release = await waiting;
    release();
    // one take that lasts the whole timeout is still a timeout
    take();
    await expect(acquireFileLock(path, { timeoutMs: 300 })).rejects.toMatchObject({ code: "audit_lock_timeout" });
    unlinkSync(path);
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

/** The holder files beside a lock (`<lock>.<pid>.<8 hex>`). */
function holdersOf(dir: string, lock = "x.lock"): string[] {
  return readdirSync(dir).filter(
    (name) => /^\.\d+\.[0-9a-f]{8}$/.test(name.slice(lock.length)) && name.startsWith(lock),
  );
}

describe("file lock taken again and again by one holder (FileLock)", () => {
  it("is exclusive against acquireFileLock and another FileLock, and reads as a lock file of this process", async () => {
    const dir = homes.make();
    const path = join(dir, "x.lock");
    const a = new FileLock(path);
    const b = new FileLock(path, { timeoutMs: 30 });
    const release = await a.acquire();
    const [pid, host, token] = readFileSync(path, "utf8").split("\n");
    expect([pid, host]).toEqual([String(process.pid), hostname()]);
    expect(token).toMatch(/^[0-9a-f-]{36}$/);
    await expect(b.acquire()).rejects.toMatchObject({ code: "audit_lock_timeout" });
    await expect(acquireFileLock(path, { timeoutMs: 30 })).rejects.toMatchObject({ code: "audit_lock_timeout" });
    release();
    release();
    expect(existsSync(path)).toBe(false);
    const other = await acquireFileLock(path, { timeoutMs: 50 });
    await expect(b.acquire()).rejects.toMatchObject({ code: "audit_lock_timeout" });
    other();
    (await b.acquire())();
    a.close();
    b.close();
    expect(holdersOf(dir)).toEqual([]);
  });

  it("takes the lock with a fresh modification time, so others do not judge it stale by the holder's age", async () => {
    const dir = homes.make();
    const path = join(dir, "x.lock");
    const lock = new FileLock(path);
    (await lock.acquire())();
    const [holder] = holdersOf(dir);
    const old = new Date(Date.now() - 120_000);
    utimesSync(join(dir, holder as string), old, old);
    const release = await lock.acquire();
    expect(Date.now() - statSync(path).mtimeMs).toBeLessThan(60_000);
    await expect(acquireFileLock(path, { timeoutMs: 30, staleMs: 60_000 })).rejects.toMatchObject({
      code: "audit_lock_timeout",
    });
    release();
    lock.close();
  });

  it("release leaves alone a lock another process took after ours was broken", async () => {
    const dir = homes.make();
    const path = join(dir, "x.lock");
    const lock = new FileLock(path);
    const release = await lock.acquire();
    renameSync(path, join(dir, "grave")); // broken as stale by someone else
    unlinkSync(join(dir, "grave"));
    const theirs = await acquireFileLock(path, { timeoutMs: 50 });
    release();
    expect(existsSync(path)).toBe(true);
    theirs();
    lock.close();
  });

  it("makes a new holder file when its own was removed, and close removes it", async () => {
    const dir = homes.make();
    const path = join(dir, "x.lock");
    const lock = new FileLock(path);
    (await lock.acquire())();
    const [first] = holdersOf(dir);
    unlinkSync(join(dir, first as string));
    const release = await lock.acquire();
    expect(holdersOf(dir)).toHaveLength(1);
    release();
    lock.close();
    expect(holdersOf(dir)).toEqual([]);
  });

  it("removes the holder files of dead processes of this host, not of live ones or other hosts", async () => {
    const dir = homes.make();
    const path = join(dir, "x.lock");
    const dead = deadPid();
    writeFileSync(join(dir, `x.lock.${dead}.0123abcd`), `${dead}\n${hostname()}\nt\n`);
    writeFileSync(join(dir, `x.lock.${process.pid}.4567abcd`), `${process.pid}\n${hostname()}\nt\n`);
    writeFileSync(join(dir, `x.lock.${dead}.89abcdef`), `${dead}\nanother-host.example\nt\n`);
    writeFileSync(join(dir, "x.lock.note"), "not a holder");
    const lock = new FileLock(path);
    (await lock.acquire())();
    lock.close();
    expect(readdirSync(dir).sort()).toEqual(
      [`x.lock.${process.pid}.4567abcd`, `x.lock.${dead}.89abcdef`, "x.lock.note"].sort(),
    );
  });

  it("an audit writer leaves no holder file once closed", async () => {
    const dir = homes.make();
    const log = await openAuditLog(join(dir, "audit.jsonl"), { clock: () => new Date(), fsync: "batch" });
    await log.append({ event_type: "tool_call_intercepted" });
    expect(holdersOf(dir, "audit.jsonl.lock")).toHaveLength(1);
    await log.close();
    expect(readdirSync(dir).sort()).toEqual(["audit.jsonl"]);
  });
});
