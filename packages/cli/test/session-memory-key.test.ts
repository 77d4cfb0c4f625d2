import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openHomeState } from "../src/wiring/home-state.js";
import { fixtureHome } from "./home-fixture.js";
import { createHomeProvenanceMemory } from "../src/wiring/session-memory.js";

const root = mkdtempSync(join(tmpdir(), "acp-session-memory-key-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const IBAN = "iban:DE89370400440532013000";

function memoryOf(home: string) {
  const lines: string[] = [];
  const state = openHomeState(home);
  const memory = createHomeProvenanceMemory({
    state,
    settings: { provenance: { remember_hours: 24 } },
    now: () => new Date("2026-11-27T10:00:00Z"),
    log: (line) => lines.push(line),
  });
  if (memory === undefined) throw new Error("no memory");
  return { memory, lines, state };
}

describe("the home's provenance memory and its key (memory.key)", () => {
  it("makes the key 0600 beside state.db and recalls through it, across processes of the home", () => {
    const { home } = fixtureHome(root);
    const a = memoryOf(home);
    a.memory.remember([IBAN], "mail.read_inbox#1");
    expect(statSync(join(home, "memory.key")).mode & 0o777).toBe(0o600);
    const b = memoryOf(home);
    expect(b.memory.recall(IBAN)).toBe("mail.read_inbox#1");
    a.state.close();
    b.state.close();
  });

  it("refuses a recall while the key is readable by others or not a key, and does not replace it", () => {
    const { home } = fixtureHome(root);
    const key = join(home, "memory.key");
    writeFileSync(key, `${"ab".repeat(32)}\n`, { mode: 0o600 });
    chmodSync(key, 0o644);
    const open = memoryOf(home);
    expect(() => open.memory.recall(IBAN)).toThrow(`run \`chmod 600 ${key}\``);
    open.memory.remember([IBAN], "mail.read_inbox#1");
    expect(open.lines.join("\n")).toContain("readable or writable by others");
    writeFileSync(key, "garbage\n");
    chmodSync(key, 0o600);
    expect(() => open.memory.recall(IBAN)).toThrow("is not a memory key");
    expect(readFileSync(key, "utf8")).toBe("garbage\n");
    // once it is fixed, the next call opens it
    writeFileSync(key, `${"ab".repeat(32)}\n`);
    expect(open.memory.recall(IBAN)).toBeUndefined();
    open.state.close();
  });
});
