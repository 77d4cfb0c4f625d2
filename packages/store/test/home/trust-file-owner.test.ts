import { chownSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { anchorPathOf, openAuditLog, readAnchor, readAnchorFile } from "../../src/audit/index.js";
import {
  configTemplate,
  loadMemoryKey,
  readConfigDocument,
  readConfigDocumentAt,
  trustFileOwners,
} from "../../src/home/index.js";
import { keyPair, steppingClock } from "../audit/audit-fixture.js";

const NOBODY = 65534;
const OTHER = 12345;
const root = mkdtempSync(join(tmpdir(), "acp-trust-owner-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

function dir(): string {
  const d = mkdtempSync(join(root, `d${++n}-`));
  return d;
}

function homeWithConfig(): string {
  const home = dir();
  writeFileSync(join(home, "config.yml"), configTemplate(join(home, "policy.yml")), { mode: 0o600 });
  return home;
}

/** A signed log of a few events and its anchor, closed. */
async function signedLog(): Promise<string> {
  const path = join(dir(), "audit.jsonl");
  const log = await openAuditLog(path, { clock: steppingClock(), signer: keyPair().privateKey, checkpointEvery: 2 });
  await log.appendMany([{ event_type: "policy_evaluated" }, { event_type: "policy_evaluated" }]);
  await log.close();
  return path;
}

function thrown(f: () => unknown): Error & { code?: string } {
  try {
    f();
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error("did not throw");
}

describe("trustFileOwners", () => {
  it("is allowedOwners of the folder, and root", () => {
    const d = dir();
    expect(trustFileOwners(d, 1000)).toEqual([1000, 0]);
    const owner = statSync(d).uid;
    expect(trustFileOwners(d, 0)).toEqual(owner === 0 ? [0] : [0, owner]);
  });
});

// chown needs root: this machine runs the tests as root
describe.runIf(process.getuid?.() === 0)("a home's trust files owned by another user", () => {
  it("refuses config.yml owned by nobody (config_not_owned), naming the file, its owner and `chown`", () => {
    const home = homeWithConfig();
    const p = join(home, "config.yml");
    const before = readFileSync(p);
    chownSync(p, NOBODY, NOBODY);
    for (const r of [readConfigDocument(home), readConfigDocumentAt(p)]) {
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect(r.issues[0]?.code).toBe("config_not_owned");
      expect(r.issues[0]?.message).toBe(
        `\`${p}\` is owned by uid ${NOBODY}, not by uid 0 that acp runs as: whoever owns a config file can name the policy and the commands acp runs; check it, then run \`chown 0 ${p}\``,
      );
    }
    expect(readFileSync(p).equals(before)).toBe(true);
    expect(statSync(p).uid).toBe(NOBODY);
    chownSync(p, 0, 0);
    expect(readConfigDocument(home).ok).toBe(true);
  });

  it("reads config.yml in a person's home that person owns (sudo -E), not a third user's", () => {
    const home = homeWithConfig();
    const p = join(home, "config.yml");
    chownSync(home, NOBODY, NOBODY);
    chownSync(p, NOBODY, NOBODY);
    expect(readConfigDocument(home).ok).toBe(true);
    chownSync(p, OTHER, OTHER);
    const r = readConfigDocument(home);
    expect(r.ok ? "ok" : r.issues[0]?.code).toBe("config_not_owned");
  });

  it("refuses memory.key owned by a third user (key_file_not_owned), not the owner of a person's home", () => {
    const home = dir();
    const first = loadMemoryKey(home);
    expect(first.ok).toBe(true);
    const p = join(home, "memory.key");
    const before = readFileSync(p);
    chownSync(p, OTHER, OTHER);
    const r = loadMemoryKey(home);
    expect(r.ok ? "ok" : r.issues[0]?.code).toBe("key_file_not_owned");
    expect(r.ok ? "" : r.issues[0]?.message).toBe(
      `\`${p}\` is owned by uid ${OTHER}, not by uid 0 that acp runs as: whoever owns the memory key can read it, or replace it with one they know; check it, then run \`chown 0 ${p}\``,
    );
    expect(readFileSync(p).equals(before)).toBe(true);
    expect(statSync(p).uid).toBe(OTHER);
    // root made it for the person whose home it is: theirs is read
    chownSync(home, NOBODY, NOBODY);
    chownSync(p, NOBODY, NOBODY);
    expect(loadMemoryKey(home)).toEqual(first);
  });

  it("refuses the audit anchor beside the log owned by nobody: the writer does not open, nothing changes", async () => {
    const path = await signedLog();
    const anchor = anchorPathOf(path);
    const log = readFileSync(path);
    const line = readFileSync(anchor);
    chownSync(anchor, NOBODY, NOBODY);
    const err = thrown(() => readAnchor(path));
    expect(err.code).toBe("ENOTOWNED");
    expect(err.message).toBe(
      `\`${anchor}\` is owned by uid ${NOBODY}, not by uid 0 that acp runs as: whoever owns an audit anchor can replace it and hide a cut of the log; check it, then run \`chown 0 ${anchor}\``,
    );
    await expect(
      openAuditLog(path, { clock: steppingClock(), signer: keyPair().privateKey, checkpointEvery: 2 }),
    ).rejects.toMatchObject({ code: "ENOTOWNED" });
    expect(readFileSync(path).equals(log)).toBe(true);
    expect(readFileSync(anchor).equals(line)).toBe(true);
    expect(statSync(anchor).uid).toBe(NOBODY);
    chownSync(anchor, 0, 0);
    expect(readAnchor(path)).toBe(line.toString("utf8").trim());
  });

  it("refuses a PostgreSQL anchor or connection record in the home owned by nobody; one a person names is read", () => {
    const home = dir();
    for (const name of ["audit-postgres-0123456789abcdef.checkpoint", "audit-postgres-0123456789abcdef.database"]) {
      const p = join(home, name);
      writeFileSync(p, '{"database":"x"}\n', { mode: 0o600 });
      chownSync(p, NOBODY, NOBODY);
      const err = thrown(() => readAnchorFile(p, { regularOnly: true }));
      expect(err.code).toBe("ENOTOWNED");
      expect(err.message).toContain(`run \`chown 0 ${p}\``);
      // `--anchor FILE`: the person chose it
      expect(readAnchorFile(p)).toBe('{"database":"x"}');
      chownSync(p, 0, 0);
      expect(readAnchorFile(p, { regularOnly: true })).toBe('{"database":"x"}');
    }
  });
});
