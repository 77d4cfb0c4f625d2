import { isUtf8 } from "node:buffer";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_AUDIT_LINE_LENGTH, NOT_UTF8_AUDIT_LINE, sealAuditInput, verifyAuditChain } from "@acp/core";
import {
  countAuditFileLines,
  readAuditFileLines,
  readAuditFileLinesBackward,
  verifyAuditFile,
} from "../../src/audit/index.js";
import { readLines, tempHomes } from "./audit-fixture.js";
import { writeChain } from "./chain-file.js";

const homes = tempHomes();
afterAll(homes.cleanup);

/** The lines of a chain of `n` events whose `metadata.note` is `note(i)`. */
function chainOfNotes(n: number, note: (i: number) => string): string[] {
  let head: string | null = null;
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const sealed = sealAuditInput(
      { event_type: "tool_call_completed", tool: "send_email", metadata: { note: note(i) } },
      { id: `ae_${i}`, timestamp: "2026-01-15T12:00:00.000Z", previousEventHash: head },
    );
    lines.push(sealed.line);
    head = sealed.event.event_hash;
  }
  return lines;
}

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

describe("readAuditFileLines", () => {
  it("yields the lines split('\\n') gives, for any text and chunk size: a last line without newline, multi-byte characters cut by a chunk, empty lines", async () => {
    const dir = homes.make();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.string({ unit: "grapheme" }), fc.constant("\n"), fc.constant("é€😀\n")), {
          maxLength: 30,
        }),
        fc.integer({ min: 1, max: 17 }),
        async (pieces, chunkBytes) => {
          const text = pieces.join("");
          const path = join(dir, "log.jsonl");
          writeFileSync(path, text);
          const expected = text.split("\n");
          if (expected.at(-1) === "") expected.pop();
          const reader = readAuditFileLines(path, { chunkBytes });
          expect(await collect(reader)).toEqual(expected);
          expect(reader.progress.lines).toBe(expected.length);
          expect(reader.progress.unterminated).toBe(text !== "" && !text.endsWith("\n"));
          expect(reader.progress.end).toBe(Buffer.byteLength(text));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("decodes any bytes as decoding each line does, and gives a line that is not valid UTF-8 as the stand-in the verifier refuses", async () => {
    const path = join(homes.make(), "log.jsonl");
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.uint8Array({ maxLength: 12 }),
            fc.constant(Uint8Array.of(0x0a)),
            fc.constant(Uint8Array.of(0xef, 0xbf, 0xbd)),
          ),
          { maxLength: 20 },
        ),
        fc.integer({ min: 1, max: 9 }),
        async (pieces, chunkBytes) => {
          const bytes = Buffer.concat(pieces);
          writeFileSync(path, bytes);
          const expected: string[] = [];
          for (let start = 0; start < bytes.length;) {
            const nl = bytes.indexOf(0x0a, start);
            const line = bytes.subarray(start, nl === -1 ? bytes.length : nl);
            expected.push(isUtf8(line) ? line.toString("utf8") : NOT_UTF8_AUDIT_LINE);
            start = nl === -1 ? bytes.length : nl + 1;
          }
          expect(await collect(readAuditFileLines(path, { chunkBytes }))).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("starts at a byte offset and says where each line began", async () => {
    const path = join(homes.make(), "log.jsonl");
    writeFileSync(path, "aé\nbb\ncc");
    const reader = readAuditFileLines(path, { start: 4, chunkBytes: 2 });
    expect(await collect(reader)).toEqual(["bb", "cc"]);
    expect(reader.progress).toEqual({ lines: 2, lastStart: 7, end: 9, unterminated: true, lastLine: "cc" });
  });

  it("does not hold a line longer than the verifier reads; the verifier refuses it as before", async () => {
    const path = join(homes.make(), "log.jsonl");
    const chain = writeChain(path, 3);
    const huge = "y".repeat(3 * MAX_AUDIT_LINE_LENGTH + 10);
    writeFileSync(path, `${chain.lines[0]}\n${huge}\n${chain.lines[1]}\n`);
    const lines = await collect(readAuditFileLines(path, { chunkBytes: 64 * 1024 }));
    expect(lines.map((l) => l.length)).toEqual([
      chain.lines[0]?.length,
      MAX_AUDIT_LINE_LENGTH + 1,
      chain.lines[1]?.length,
    ]);
    const { verification } = await verifyAuditFile(path);
    expect(verification).toEqual(verifyAuditChain(readLines(path)));
    expect(verification.problem).toMatchObject({ line: 2, code: "not_json" });
  });

  it("gives a line too long to verify as soon as it is too long, so a file without newlines is not read on: /dev/zero fails at once", async () => {
    const lines = readAuditFileLines("/dev/zero");
    for await (const line of lines) {
      expect(line.length).toBe(MAX_AUDIT_LINE_LENGTH + 1);
      break;
    }
    expect(lines.progress).toMatchObject({ lines: 1, unterminated: false }); // not known to have no newline
    const { verification } = await verifyAuditFile("/dev/zero");
    expect(verification.problem).toMatchObject({ line: 1, code: "not_json" });
    // a long line followed by more lines: the same lines as before, each once
    const path = join(homes.make(), "log.jsonl");
    const chain = writeChain(path, 2);
    writeFileSync(
      path,
      `${"y".repeat(3 * MAX_AUDIT_LINE_LENGTH + 10)}\n${chain.lines[0]}\n${"z".repeat(MAX_AUDIT_LINE_LENGTH * 4)}`,
    );
    const read = readAuditFileLines(path, { chunkBytes: 100_000 });
    expect((await collect(read)).map((l) => l.length)).toEqual([
      MAX_AUDIT_LINE_LENGTH + 1,
      chain.lines[0]?.length,
      MAX_AUDIT_LINE_LENGTH + 1,
    ]);
    expect(read.progress).toMatchObject({ lines: 3, unterminated: true });
  }, 20_000);

  it("closes the file when the iteration stops early, and rejects a missing file", async () => {
    const path = join(homes.make(), "log.jsonl");
    writeChain(path, 5);
    for await (const line of readAuditFileLines(path)) {
      expect(line.length).toBeGreaterThan(0);
      break;
    }
    await expect(collect(readAuditFileLines(join(homes.make(), "missing.jsonl")))).rejects.toMatchObject({
      code: "ENOENT",
    });
  });
});

describe("readAuditFileLinesBackward", () => {
  it("yields the lines split('\\n') gives, last first and numbered, for any bytes and chunk size", async () => {
    const path = join(homes.make(), "log.jsonl");
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.uint8Array({ maxLength: 12 }),
            fc.constant(Uint8Array.of(0x0a)),
            fc.constant(Buffer.from("é€😀")),
          ),
          { maxLength: 20 },
        ),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 1, max: 9 }),
        async (pieces, chunkBytes, countChunk) => {
          const bytes = Buffer.concat(pieces);
          writeFileSync(path, bytes);
          const expected = bytes.toString("utf8").split("\n");
          if (expected.at(-1) === "") expected.pop();
          const extent = await countAuditFileLines(path, countChunk);
          expect(extent).toMatchObject({ lines: expected.length, size: bytes.length });
          const backward: { line: number; text: string }[] = [];
          for await (const line of readAuditFileLinesBackward(path, extent, chunkBytes)) backward.push(line);
          expect(backward).toEqual(expected.map((text, i) => ({ line: i + 1, text })).reverse());
          // not counted (acp audit tail): the same lines, the first one too (empty or not), numbered from the bound
          const bound = { lines: Number.MAX_SAFE_INTEGER, size: bytes.length };
          const uncounted: string[] = [];
          for await (const { text } of readAuditFileLinesBackward(path, bound, chunkBytes)) uncounted.push(text);
          expect(uncounted).toEqual([...expected].reverse());
        },
      ),
      { numRuns: 400 },
    );
  });

  it("with maxLineBytes, stops in a longer line (flagged, with where it ends) and reads nothing before it", async () => {
    const path = join(homes.make(), "log.jsonl");
    const long = "y".repeat(50);
    writeFileSync(path, `a\n${long}\nbc\nd\n`);
    const extent = await countAuditFileLines(path);
    const read = async (maxLineBytes?: number): Promise<unknown[]> => {
      const out: unknown[] = [];
      const options = maxLineBytes === undefined ? {} : { maxLineBytes };
      for await (const line of readAuditFileLinesBackward(path, extent, 4, options)) out.push(line);
      return out;
    };
    expect(await read(10)).toEqual([
      { line: 4, text: "d" },
      { line: 3, text: "bc" },
      { line: 2, text: "x".repeat(MAX_AUDIT_LINE_LENGTH + 1), oversized: { end: 2 + long.length } },
    ]);
    // without a bound (and with one it fits), read through as before: every line
    const whole = [
      { line: 4, text: "d" },
      { line: 3, text: "bc" },
      { line: 2, text: long },
      { line: 1, text: "a" },
    ];
    expect(await read()).toEqual(whole);
    expect(await read(50)).toEqual(whole);
    // the first line too: that nothing is before it is known only once its start is reached
    writeFileSync(path, `${long}\nd\n`);
    const first: unknown[] = [];
    for await (const line of readAuditFileLinesBackward(path, await countAuditFileLines(path), 4, { maxLineBytes: 10 }))
      first.push(line);
    expect(first).toEqual([
      { line: 2, text: "d" },
      { line: 1, text: "x".repeat(MAX_AUDIT_LINE_LENGTH + 1), oversized: { end: long.length } },
    ]);
  });

  it("reads only the counted bytes: lines appended after the count are not read", async () => {
    const path = join(homes.make(), "log.jsonl");
    writeFileSync(path, "a\nb\n");
    const extent = await countAuditFileLines(path);
    writeFileSync(path, "a\nb\nc\n");
    const lines: string[] = [];
    for await (const { text } of readAuditFileLinesBackward(path, extent, 2)) lines.push(text);
    expect(lines).toEqual(["b", "a"]);
    expect(await countAuditFileLines(join(homes.make(), "missing.jsonl"))).toEqual({
      lines: 0,
      size: 0,
      terminated: { lines: 0, lastStart: 0, end: 0 },
    });
  });
});

describe("countAuditFileLines", () => {
  /** Where the newline-terminated lines of `bytes` end, and where the last of them starts. */
  const terminatedOf = (bytes: Buffer): { lines: number; lastStart: number; end: number } => {
    const end = bytes.lastIndexOf(0x0a) + 1;
    const lastStart = end < 2 ? 0 : bytes.lastIndexOf(0x0a, end - 2) + 1;
    return { lines: bytes.subarray(0, end).toString("latin1").split("\n").length - 1, lastStart, end };
  };

  it("continued from an earlier count of a prefix, gives the whole count for any bytes appended and chunk size", async () => {
    const path = join(homes.make(), "log.jsonl");
    const piece = fc.oneof(fc.uint8Array({ maxLength: 12 }), fc.constant(Uint8Array.of(0x0a)));
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { maxLength: 12 }),
        fc.array(piece, { maxLength: 12 }),
        fc.integer({ min: 1, max: 9 }),
        async (before, after, chunkBytes) => {
          const prefix = Buffer.concat(before);
          writeFileSync(path, prefix);
          const first = await countAuditFileLines(path, chunkBytes);
          expect(first.terminated).toEqual(terminatedOf(prefix));
          const bytes = Buffer.concat([prefix, ...after]);
          writeFileSync(path, bytes);
          const whole = await countAuditFileLines(path, chunkBytes);
          expect(whole.terminated).toEqual(terminatedOf(bytes));
          expect(await countAuditFileLines(path, chunkBytes, first.terminated)).toEqual(whole);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("counts the bytes the file holds when counted: a device that never ends (/dev/zero) counts as empty", async () => {
    expect(await countAuditFileLines("/dev/zero")).toMatchObject({ lines: 0, size: 0 });
  }, 20_000);

  it("reads only the bytes after where it continues from: lines before it are not counted again", async () => {
    const path = join(homes.make(), "log.jsonl");
    writeFileSync(path, "a\nb\n");
    const first = await countAuditFileLines(path);
    expect(first).toEqual({ lines: 2, size: 4, terminated: { lines: 2, lastStart: 2, end: 4 } });
    // the counted bytes replaced by others without newlines: a count that read them would find fewer lines
    writeFileSync(path, "xxxxc\nd");
    expect(await countAuditFileLines(path, 2, first.terminated)).toEqual({
      lines: 4,
      size: 7,
      terminated: { lines: 3, lastStart: 4, end: 6 },
    });
    expect(await countAuditFileLines(path)).toMatchObject({ lines: 2, size: 7 });
  });
});

describe("verifyAuditFile", () => {
  it("gives the whole-file verifier's result on an intact log and on a tampered one", async () => {
    const path = join(homes.make(), "log.jsonl");
    const chain = writeChain(path, 40);
    const whole = verifyAuditChain(readLines(path));
    expect((await verifyAuditFile(path)).verification).toEqual(whole);
    expect(whole).toMatchObject({ ok: true, count: 40 });
    const duplicated = [...chain.lines.slice(0, 30), chain.lines[3], ...chain.lines.slice(30)];
    writeFileSync(path, `${duplicated.join("\n")}\n`);
    const { verification } = await verifyAuditFile(path);
    expect(verification.problem).toMatchObject({ line: 31, code: "reordered" });
    expect(verification).toEqual(verifyAuditChain(readLines(path)));
  });

  it("any single-byte change to a log holding U+FFFD and other multi-byte characters is detected, read from the file", async () => {
    const path = join(homes.make(), "log.jsonl");
    const lines = chainOfNotes(4, (i) => `\uFFFD${i}é€😀\uFFFD`);
    const bytes = Buffer.from(`${lines.join("\n")}\n`, "utf8");
    // half the changes hit the bytes of a U+FFFD by a small step (EF → F0…F4 reads as U+FFFD again)
    const replacement: number[] = [];
    for (let at = bytes.indexOf("\uFFFD"); at !== -1; at = bytes.indexOf("\uFFFD", at + 1)) {
      replacement.push(at, at + 1, at + 2);
    }
    const offsets = fc.oneof(fc.constantFrom(...replacement), fc.nat(bytes.length - 1));
    const deltas = fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 255 }));
    await fc.assert(
      fc.asyncProperty(offsets, deltas, async (offset, delta) => {
        const copy = Buffer.from(bytes);
        copy[offset] = ((copy[offset] ?? 0) + delta) % 256;
        writeFileSync(path, copy);
        expect((await verifyAuditFile(path)).verification.ok).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  it("refuses a line whose bytes were changed into invalid UTF-8 that decodes to the same text", async () => {
    // U+FFFD is legitimate content (a lone surrogate a caller sent is recorded as one); `F0 BF BD` before
    // a `"` and a lone `80` also decode to U+FFFD, so the decoded text, and its hash, would not change
    const path = join(homes.make(), "log.jsonl");
    const lines = chainOfNotes(3, () => "caf\uFFFD");
    const bytes = Buffer.from(`${lines.join("\n")}\n`, "utf8");
    writeFileSync(path, bytes);
    expect((await verifyAuditFile(path)).verification).toMatchObject({ ok: true, count: 3 });
    const replacement = bytes.indexOf(Buffer.of(0xef, 0xbf, 0xbd), bytes.indexOf(0x0a) + 1); // line 2's
    for (const forged of [Buffer.of(0xf0, 0xbf, 0xbd), Buffer.of(0x80)]) {
      const edited = Buffer.concat([bytes.subarray(0, replacement), forged, bytes.subarray(replacement + 3)]);
      expect(edited.toString("utf8")).toBe(bytes.toString("utf8"));
      writeFileSync(path, edited);
      const { verification } = await verifyAuditFile(path);
      expect(verification).toMatchObject({ ok: false, count: 1 });
      expect(verification.problem).toMatchObject({ line: 2, code: "not_json", message: "line is not valid UTF-8" });
    }
  });
});
