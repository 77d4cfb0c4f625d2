import { chownSync, lstatSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { anchorPathOf, beginAnchor, readAnchor, writeAnchor } from "../../src/audit/anchor.js";
import { openAuditLog } from "../../src/audit/index.js";
import { keyPair, readEvents, readLines, steppingClock, tempHomes } from "./audit-fixture.js";

const homes = tempHomes();
afterAll(homes.cleanup);

describe("the anchor beside the log", () => {
  it("is replaced only by commit: the temporary file is written first, under another name", async () => {
    const dir = homes.make();
    const log = join(dir, "audit.jsonl");
    writeAnchor(log, "old");
    const pending = beginAnchor(log, "new");
    expect(readAnchor(log)).toBe("old");
    await pending.commit();
    expect(readAnchor(log)).toBe("new");
    expect(readFileSync(anchorPathOf(log), "utf8")).toBe("new\n");
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("is left as it was when abandoned (the log write failed), with no temporary file behind", async () => {
    const dir = homes.make();
    const log = join(dir, "audit.jsonl");
    writeAnchor(log, "old");
    await beginAnchor(log, "new").abandon();
    expect(readAnchor(log)).toBe("old");
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("rejects commit when its temporary file cannot be written, and abandon still settles", async () => {
    const log = join(homes.make(), "missing-dir", "audit.jsonl");
    await expect(beginAnchor(log, "line").commit()).rejects.toThrow();
    await expect(beginAnchor(log, "line").abandon()).resolves.toBeUndefined();
  });

  it("never writes through a symbolic link planted at the temporary name the old writer used", async () => {
    const dir = homes.make();
    const log = join(dir, "audit.jsonl");
    const victim = join(dir, "victim");
    writeFileSync(victim, "precious\n");
    // the writer before this fix wrote `<anchor>.tmp-<pid>` with `w` (following a link) and renamed it
    symlinkSync(victim, `${anchorPathOf(log)}.tmp-${process.pid}`);
    writeAnchor(log, "sync");
    await beginAnchor(log, "async").commit();
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
    expect(readAnchor(log)).toBe("async");
    expect(lstatSync(anchorPathOf(log)).isFile()).toBe(true);
    expect(lstatSync(anchorPathOf(log)).mode & 0o777).toBe(0o600);
  });

  it("holds the last checkpoint line of each batch the writer wrote", async () => {
    const keys = keyPair();
    const dir = homes.make();
    const path = join(dir, "audit.jsonl");
    const log = await openAuditLog(path, {
      clock: steppingClock(),
      fsync: "batch",
      signer: keys.privateKey,
      checkpointEvery: 3,
    });
    await log.appendMany(
      Array.from({ length: 10 }, (_, i) => ({ event_type: "policy_evaluated", request_id: `cr_${i}` }) as const),
    );
    const lines = readLines(path);
    const lastCheckpoint =
      lines[
        readEvents(path)
          .map((e) => e.event_type)
          .lastIndexOf("checkpoint")
      ];
    expect(lastCheckpoint).toBeDefined();
    expect(readAnchor(path)).toBe(lastCheckpoint);
    await log.close();
    expect(readAnchor(path)).toBe(readLines(path).at(-1));
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it.runIf(process.getuid?.() === 0)(
    "written by root beside a log a person owns (sudo -E acp run), is the person's, so their own writer can read it",
    async () => {
      const keys = keyPair();
      const dir = homes.make();
      const path = join(dir, "audit.jsonl");
      writeFileSync(path, "", { mode: 0o600 });
      chownSync(dir, 65534, 65534);
      chownSync(path, 65534, 65534);
      const log = await openAuditLog(path, {
        clock: steppingClock(),
        fsync: "batch",
        signer: keys.privateKey,
        checkpointEvery: 2,
      });
      await log.appendMany(
        Array.from({ length: 3 }, (_, i) => ({ event_type: "policy_evaluated", request_id: `cr_${i}` }) as const),
      );
      const afterBatch = statSync(anchorPathOf(path));
      expect([afterBatch.uid, afterBatch.gid, afterBatch.mode & 0o777]).toEqual([65534, 65534, 0o600]);
      await log.close();
      const afterClose = statSync(anchorPathOf(path));
      expect([afterClose.uid, afterClose.gid]).toEqual([65534, 65534]);
      // writeAnchor (the synchronous path) too
      writeAnchor(path, "line");
      expect(statSync(anchorPathOf(path)).uid).toBe(65534);
    },
  );

  it.runIf(process.getuid?.() === 0)(
    "a log root creates in a person's directory is the person's (and its anchor), a log already there keeps its owner",
    async () => {
      const keys = keyPair();
      const dir = homes.make();
      chownSync(dir, 65534, 65534);
      const path = join(dir, "audit.jsonl");
      const log = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey, checkpointEvery: 2 });
      await log.appendMany([{ event_type: "policy_evaluated" }, { event_type: "policy_evaluated" }]);
      await log.close();
      for (const file of [path, anchorPathOf(path)]) {
        const st = statSync(file);
        expect([file, st.uid, st.gid, st.mode & 0o777]).toEqual([file, 65534, 65534, 0o600]);
      }
      // root's own log in root's directory stays root's
      const own = join(homes.make(), "audit.jsonl");
      await (await openAuditLog(own, { clock: steppingClock() })).close();
      expect(statSync(own).uid).toBe(0);
    },
  );
});
