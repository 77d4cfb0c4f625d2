/**
 * `acp init` must not replace a home's keys or move its audit log while a live process writes that log
 * (before, `init --force` renamed audit.jsonl under a running proxy, which went on signing with the old key).
 * A live writer is known by the holder file every audit writer keeps beside `audit.jsonl.lock`; one left by
 * a writer that was killed must not count.
 */
import { spawnSync } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { wrapPrivateKey } from "@acp/core";
import {
  configTemplate,
  createHome,
  homePaths,
  liveHomeWriters,
  openAuditLog,
  STARTER_POLICY,
  type CreateHomeInput,
} from "../../src/index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempHome(): string {
  const dir = mkdtempSync(join(tmpdir(), "acp-live-writers-"));
  dirs.push(dir);
  const home = join(dir, "home");
  mkdirSync(home, { mode: 0o700 });
  return home;
}

function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
  return Number(child.stdout.toString());
}

function input(force: boolean): CreateHomeInput {
  return {
    privateKeyFile: wrapPrivateKey(randomBytes(32), null, randomBytes),
    configText: configTemplate("policy.yml"),
    policyText: STARTER_POLICY,
    force,
    stamp: "t",
  };
}

describe("liveHomeWriters", () => {
  it("is empty for a home no writer has opened, and for one whose writer closed", async () => {
    const home = tempHome();
    expect(liveHomeWriters(home)).toEqual([]);
    const log = await openAuditLog(homePaths(home).audit, { clock: () => new Date() });
    const writers = liveHomeWriters(home);
    expect(writers.map((w) => [w.pid, w.host])).toEqual([[process.pid, hostname()]]);
    expect(writers[0]?.path).toMatch(/audit\.jsonl\.lock\.\d+\.[0-9a-f]{8}$/);
    await log.close();
    expect(liveHomeWriters(home)).toEqual([]);
  });

  it("leaves out a holder file of a process of this host that is gone, and keeps one of another host", () => {
    const home = tempHome();
    const lock = `${homePaths(home).audit}.lock`;
    writeFileSync(`${lock}.${deadPid()}.0123abcd`, `${deadPid()}\n${hostname()}\ntoken\n`);
    expect(liveHomeWriters(home)).toEqual([]);
    // a holder of another machine sharing the home cannot be judged here: it counts
    const remote = `${lock}.4242.89abcdef`;
    writeFileSync(remote, `4242\nanother-host.example\ntoken\n`);
    expect(liveHomeWriters(home)).toEqual([{ pid: 4242, host: "another-host.example", path: remote }]);
  });

  it("counts a lock taken by a live process once, with its holder file", () => {
    const home = tempHome();
    const lock = `${homePaths(home).audit}.lock`;
    const text = `${process.pid}\n${hostname()}\ntoken\n`;
    writeFileSync(lock, text);
    writeFileSync(`${lock}.${process.pid}.0123abcd`, text);
    // neither the breaker nor a moved-aside lock is a holder
    writeFileSync(`${lock}.break`, "");
    writeFileSync(`${lock}.stale-1-x`, text);
    expect(liveHomeWriters(home).map((w) => w.pid)).toEqual([process.pid]);
  });
});

describe("createHome while a live writer holds the home's audit log", () => {
  it("refuses with --force (home_in_use), changing nothing, and goes ahead once the writer closed", async () => {
    const home = tempHome();
    expect(createHome(home, input(false)).ok).toBe(true);
    const p = homePaths(home);
    const publicKey = readFileSync(p.publicKey, "utf8");
    // a log signed with a key the new one cannot verify: --force would move it aside
    const { privateKey } = generateKeyPairSync("ed25519");
    const signed = await openAuditLog(p.audit, { clock: () => new Date(), signer: privateKey });
    await signed.append({ event_type: "policy_evaluated", tool: "t", decision: "accept" });
    await signed.close();
    const before = readdirSync(home).sort();

    const live = await openAuditLog(p.audit, { clock: () => new Date() });
    const r = createHome(home, input(true));
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.issues[0]?.code).toBe("home_in_use");
      expect(r.issues[0]?.message).toContain(`\`${home}\` is in use: pid ${process.pid} writes its audit log`);
      expect(r.issues[0]?.message).toContain("run acp init again");
    }
    expect(readFileSync(p.publicKey, "utf8")).toBe(publicKey);
    expect(existsSync(p.audit)).toBe(true);
    await live.close();
    expect(readdirSync(home).sort()).toEqual(before);

    const again = createHome(home, input(true));
    expect(again.ok && again.value.auditMovedTo).toBe(`${p.audit}.before-init-t`);
  });

  it("is not held up by the holder file of a writer that was killed", () => {
    const home = tempHome();
    const pid = deadPid();
    writeFileSync(`${homePaths(home).audit}.lock.${pid}.0123abcd`, `${pid}\n${hostname()}\ntoken\n`);
    expect(createHome(home, input(false)).ok).toBe(true);
  });
});
