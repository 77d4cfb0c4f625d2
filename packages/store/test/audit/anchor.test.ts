import { lstatSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
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
});
