import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createFileExclusive, homePaths, loadMemoryKey } from "../../src/index.js";

const root = mkdtempSync(join(tmpdir(), "acp-memory-key-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const home = (): string => mkdtempSync(join(root, `h${++n}-`));
const code = (r: { ok: boolean; issues?: readonly { code: string }[] }): string =>
  r.ok ? "ok" : (r.issues?.[0]?.code ?? "?");

describe("the provenance memory's key (memory.key)", () => {
  it("is made once, 0600 under a permissive umask, 32 random bytes as hex, and read back the same", () => {
    const h = home();
    const old = process.umask(0o000);
    let first;
    try {
      first = loadMemoryKey(h);
    } finally {
      process.umask(old);
    }
    expect(first.ok).toBe(true);
    if (!first.ok) return;
    expect(first.value).toHaveLength(32);
    const path = homePaths(h).memoryKey;
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, "utf8")).toBe(`${Buffer.from(first.value).toString("hex")}\n`);
    expect(loadMemoryKey(h)).toEqual(first);
    expect(readdirSync(h)).toEqual(["memory.key"]); // no temporary file left
  });

  it("takes the key another process made first, never replacing it", () => {
    const h = home();
    const theirs = "11".repeat(32);
    // the other process's file appears between our look and our create
    const r = loadMemoryKey(h, (size) => {
      writeFileSync(homePaths(h).memoryKey, `${theirs}\n`, { mode: 0o600 });
      return new Uint8Array(size).fill(0x22);
    });
    expect(r.ok && Buffer.from(r.value).toString("hex")).toBe(theirs);
    expect(readFileSync(homePaths(h).memoryKey, "utf8")).toBe(`${theirs}\n`);
  });

  it("refuses a key group or others can read, and leaves it as it is", () => {
    const h = home();
    const path = homePaths(h).memoryKey;
    writeFileSync(path, `${"33".repeat(32)}\n`, { mode: 0o600 });
    chmodSync(path, 0o640);
    const r = loadMemoryKey(h);
    expect(code(r)).toBe("key_file_too_open");
    expect(r.ok ? "" : r.issues[0]?.message).toContain(`run \`chmod 600 ${path}\``);
    expect(readFileSync(path, "utf8")).toBe(`${"33".repeat(32)}\n`);
  });

  it("refuses a file that is not a key, and one that cannot be read, instead of making a new key", () => {
    const h = home();
    const path = homePaths(h).memoryKey;
    writeFileSync(path, "not a key\n", { mode: 0o600 });
    expect(code(loadMemoryKey(h))).toBe("key_file_malformed");
    // empty, or the start of a key, is read again for a while (another process may be writing it in
    // place, on a file system without hard links); still short, it is not a key
    for (const partial of ["", "0123abcd"]) {
      writeFileSync(path, partial, { mode: 0o600 });
      let waited = 0;
      expect(code(loadMemoryKey(h, undefined, (ms) => (waited += ms)))).toBe("key_file_malformed");
      expect(waited).toBeGreaterThanOrEqual(2000);
      expect(readFileSync(path, "utf8")).toBe(partial);
    }
    rmSync(path);
    mkdirSync(path, { mode: 0o700 });
    expect(code(loadMemoryKey(h))).toBe("key_unreadable");
  });

  it.runIf(process.getuid?.() === 0)(
    "made by root in a person's home (sudo -E acp run), is the person's, so their own proxy can read it",
    () => {
      const h = home();
      chownSync(h, 12345, 12345);
      const r = loadMemoryKey(h);
      expect(r.ok).toBe(true);
      const st = statSync(homePaths(h).memoryKey);
      expect([st.uid, st.gid, st.mode & 0o777]).toEqual([12345, 12345, 0o600]);
      expect(loadMemoryKey(h)).toEqual(r);
    },
  );

  it("fails to make a key where it cannot write one", () => {
    const r = loadMemoryKey(join(home(), "no-such-home"));
    expect(code(r)).toBe("home_write_failed");
  });
});

function errorCode(fn: () => void): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
  return "no error";
}

describe("creating a file exclusively", () => {
  it("never replaces what is there, a symbolic link included, and leaves no temporary file", () => {
    const h = home();
    const path = join(h, "memory.key");
    createFileExclusive(path, "first\n");
    expect(errorCode(() => createFileExclusive(path, "second\n"))).toBe("EEXIST");
    expect(readFileSync(path, "utf8")).toBe("first\n");
    expect(readdirSync(h)).toEqual(["memory.key"]);
    const target = join(h, "target");
    writeFileSync(target, "theirs\n");
    symlinkSync(target, join(h, "link.key"));
    expect(errorCode(() => createFileExclusive(join(h, "link.key"), "ours\n"))).toBe("EEXIST");
    expect(readFileSync(target, "utf8")).toBe("theirs\n");
  });

  it("on a file system without hard links, creates the name itself exclusively, never following a link", () => {
    const h = home();
    const noLinks = (): never => {
      throw Object.assign(new Error("EPERM: operation not permitted, link"), { code: "EPERM" });
    };
    const path = join(h, "memory.key");
    const old = process.umask(0o000);
    try {
      createFileExclusive(path, "first\n", 0o600, undefined, noLinks);
    } finally {
      process.umask(old);
    }
    expect(readFileSync(path, "utf8")).toBe("first\n");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(h)).toEqual(["memory.key"]); // the temporary file is gone
    expect(errorCode(() => createFileExclusive(path, "second\n", 0o600, undefined, noLinks))).toBe("EEXIST");
    expect(readFileSync(path, "utf8")).toBe("first\n");
    const target = join(h, "target");
    writeFileSync(target, "theirs\n");
    symlinkSync(target, join(h, "link.key"));
    expect(errorCode(() => createFileExclusive(join(h, "link.key"), "ours\n", 0o600, undefined, noLinks))).toBe(
      "EEXIST",
    );
    expect(readFileSync(target, "utf8")).toBe("theirs\n");
    // any other failure of link(2) is still an error, not a second way in
    const denied = (): never => {
      throw Object.assign(new Error("EACCES"), { code: "EACCES" });
    };
    expect(errorCode(() => createFileExclusive(join(h, "other.key"), "x\n", 0o600, undefined, denied))).toBe("EACCES");
    expect(readdirSync(h).sort()).toEqual(["link.key", "memory.key", "target"]);
  });

  it("reads a key another process is still writing in place once it is whole", () => {
    const h = home();
    const path = homePaths(h).memoryKey;
    const key = "44".repeat(32);
    writeFileSync(path, key.slice(0, 10), { mode: 0o600 });
    let pauses = 0;
    const r = loadMemoryKey(h, undefined, () => {
      if (++pauses === 3) writeFileSync(path, `${key}\n`, { mode: 0o600 });
    });
    expect(r.ok && Buffer.from(r.value).toString("hex")).toBe(key);
    expect(pauses).toBe(3);
  });
});
