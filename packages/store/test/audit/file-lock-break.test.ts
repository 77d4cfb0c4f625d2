import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { acquireFileLock } from "../../src/audit/index.js";
import { tempHomes } from "./audit-fixture.js";

/** What the test does right after the lock's code reads a file or renames one: another process's turn. */
const turns = vi.hoisted(() => ({
  afterRead: undefined as ((path: string, text: string) => void) | undefined,
  afterRename: undefined as ((from: string) => void) | undefined,
}));

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  return {
    ...real,
    readFileSync: (...args: Parameters<typeof real.readFileSync>) => {
      const out = real.readFileSync(...args);
      if (typeof args[0] === "string") turns.afterRead?.(args[0], String(out));
      return out;
    },
    renameSync: (from: fs.PathLike, to: fs.PathLike) => {
      real.renameSync(from, to);
      turns.afterRename?.(String(from));
    },
  };
});

const homes = tempHomes();
afterAll(homes.cleanup);

function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
  return Number(child.stdout.toString());
}

describe("breaking a lock left by a dead process", () => {
  it("never moves aside the lock another waiter took after breaking the same dead one (two holders)", async () => {
    const path = join(homes.make(), "audit.jsonl.lock");
    const dead = `${deadPid()}\n${hostname()}\ndead-token\n`;
    const b = `${process.pid}\n${hostname()}\nb-token\n`;
    const c = `${process.pid}\n${hostname()}\nc-token\n`;
    fs.writeFileSync(path, dead);
    // waiter A reads the dead holder; then waiter B breaks that lock and takes it
    turns.afterRead = (read, text) => {
      if (read !== path || text !== dead) return;
      turns.afterRead = undefined;
      fs.unlinkSync(path);
      fs.writeFileSync(path, b, { flag: "wx" });
    };
    // the instant the name is free, a third waiter C takes it
    turns.afterRename = (from) => {
      if (from === path && !fs.existsSync(path)) fs.writeFileSync(path, c, { flag: "wx" });
    };
    try {
      // A must wait for B (alive), not move B's lock aside
      await expect(acquireFileLock(path, { timeoutMs: 30 })).rejects.toMatchObject({ code: "audit_lock_timeout" });
    } finally {
      turns.afterRead = undefined;
      turns.afterRename = undefined;
    }
    expect(fs.readFileSync(path, "utf8")).toBe(b);
    expect(fs.existsSync(`${path}.break`)).toBe(false);
  });

  it("still breaks the dead holder's lock when no one else did, and leaves no breaker behind", async () => {
    const path = join(homes.make(), "audit.jsonl.lock");
    fs.writeFileSync(path, `${deadPid()}\n${hostname()}\ndead-token\n`);
    const release = await acquireFileLock(path, { timeoutMs: 1000 });
    expect(fs.readFileSync(path, "utf8")).toContain(`${process.pid}\n`);
    release();
    expect(fs.readdirSync(join(path, "..")).sort()).toEqual([]);
  });

  it("removes a breaker left by a process that died breaking, once it is old", async () => {
    const path = join(homes.make(), "audit.jsonl.lock");
    fs.writeFileSync(path, `${deadPid()}\n${hostname()}\ndead-token\n`);
    fs.writeFileSync(`${path}.break`, "");
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(`${path}.break`, old, old);
    const release = await acquireFileLock(path, { timeoutMs: 2000 });
    release();
    expect(fs.existsSync(`${path}.break`)).toBe(false);
  });
});
