import {
  constants,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  EXCLUSIVE_CREATE_FLAGS,
  stageFileAtomic,
  temporaryPathFor,
  writeFileAtomic,
} from "../../src/home/atomic-write.js";

const root = mkdtempSync(join(tmpdir(), "acp-atomic-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const dir = (): string => mkdtempSync(join(root, `d${++n}-`));

/** Runs `fn` under a umask, restoring the old one (the tests run in forked processes: umask is per process). */
function underUmask<T>(mask: number, fn: () => T): T {
  const old = process.umask(mask);
  try {
    return fn();
  } finally {
    process.umask(old);
  }
}

describe("writing a home file atomically", () => {
  it("creates its temporary file exclusively and without following a link", () => {
    expect(EXCLUSIVE_CREATE_FLAGS & constants.O_EXCL).toBe(constants.O_EXCL);
    expect(EXCLUSIVE_CREATE_FLAGS & constants.O_NOFOLLOW).toBe(constants.O_NOFOLLOW);
    const path = join(dir(), "vault.json");
    expect(temporaryPathFor(path)).not.toBe(temporaryPathFor(path));
  });

  it("makes 0600 files under a permissive umask and under a restrictive one", async () => {
    const d = dir();
    underUmask(0o000, () => writeFileAtomic(join(d, "a"), "x"));
    underUmask(0o277, () => writeFileAtomic(join(d, "b"), "x"));
    await underUmask(0o000, () => stageFileAtomic(join(d, "c"), "x").commit());
    for (const name of ["a", "b", "c"]) expect(lstatSync(join(d, name)).mode & 0o777).toBe(0o600);
  });

  it("replaces a symbolic link at the target instead of writing through it", async () => {
    const d = dir();
    const victim = join(d, "victim");
    writeFileSync(victim, "precious");
    symlinkSync(victim, join(d, "serve.json"));
    symlinkSync(victim, join(d, "audit.jsonl.checkpoint"));
    writeFileAtomic(join(d, "serve.json"), "{}");
    await stageFileAtomic(join(d, "audit.jsonl.checkpoint"), "line\n").commit();
    expect(readFileSync(victim, "utf8")).toBe("precious");
    expect(lstatSync(join(d, "serve.json")).isFile()).toBe(true);
    expect(lstatSync(join(d, "audit.jsonl.checkpoint")).isFile()).toBe(true);
  });

  it("leaves no temporary file behind when a commit fails", async () => {
    const d = dir();
    await expect(stageFileAtomic(join(d, "missing", "x"), "x").commit()).rejects.toThrow();
    const staged = stageFileAtomic(join(d, "x"), "x");
    await staged.abandon();
    expect(readdirSync(d)).toEqual([]);
  });
});
