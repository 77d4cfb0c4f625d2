/**
 * The audit file's pages (`GET /v1/audit`, the console's audit page) count the file's lines continued
 * from the last page's count: only the bytes appended since are read, after checking the last counted
 * line is still at its place (the check the continued verification makes); a file rewritten, cut or
 * replaced is counted whole. The pages are those a fresh whole count gives.
 */
import { appendFileSync, mkdtempSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";
import { buildAuditEvent, serializeAuditEvent } from "@acp/core";
import type * as Store from "@acp/store";
import type { AuditFileCountedLines } from "@acp/store";
import { openAuditLog, type AuditLog } from "@acp/store";
import { createFileAuditTrail } from "../src/store/file-audit-trail.js";
import type { AuditQuery } from "../src/store/types.js";

/** Each count of the file: where it continued from, and the bytes it read (from there to the end). */
const counts = vi.hoisted(() => [] as { from: AuditFileCountedLines | undefined; bytesRead: number }[]);

vi.mock("@acp/store", async (importOriginal) => {
  const store = await importOriginal<typeof Store>();
  return {
    ...store,
    countAuditFileLines: async (path: string, chunkBytes?: number, from?: AuditFileCountedLines) => {
      const count = await store.countAuditFileLines(path, chunkBytes, from);
      counts.push({ from, bytesRead: count.size - (from?.end ?? 0) });
      return count;
    },
  };
});

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
beforeEach(() => {
  counts.length = 0;
});

function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "acp-audit-count-"));
  dirs.push(dir);
  return join(dir, "audit.jsonl");
}

async function append(log: AuditLog, n: number, tag: string): Promise<void> {
  for (let i = 0; i < n; i++) await log.append({ event_type: "policy_evaluated", tool: `tool_${tag}_${i % 10}` });
}

let serial = 0;
/** An audit event's line, newline included, that no other line equals. */
function eventLine(): string {
  const n = serial++;
  const event = buildAuditEvent(
    {
      event_type: "policy_evaluated",
      tool: `tool_${n % 3 === 0 ? "b" : "a"}`,
      metadata: { n, note: "é€".repeat(n % 4) },
    },
    { id: `ae_${n}`, timestamp: "2026-01-15T12:00:00.000Z", previousEventHash: null },
  );
  return `${serializeAuditEvent(event)}\n`;
}

const QUERIES: AuditQuery[] = [{ limit: 5 }, { limit: 3, before: 4 }, { limit: 50, q: "tool_b" }];

/** The pages a trail that never counted this file before gives: the whole file counted. */
async function freshPages(path: string): Promise<unknown[]> {
  const trail = createFileAuditTrail(path);
  return Promise.all(QUERIES.map((q) => trail.list(q)));
}

function lineCount(path: string): number {
  const lines = readFileSync(path, "utf8").split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines.length;
}

describe("the audit file's line count, continued", () => {
  it("after N new lines, a page counts only the bytes appended and gives the totals of a fresh whole count", async () => {
    const path = tempPath();
    let t = Date.UTC(2026, 0, 15);
    const log = await openAuditLog(path, { clock: () => new Date(t++) });
    const trail = createFileAuditTrail(path);
    expect(await trail.list({ limit: 5 })).toEqual({ events: [], total: 0, next: null });
    await append(log, 20, "a");
    expect((await trail.list({ limit: 5 })).total).toBe(20);
    for (const n of [1, 7, 30]) {
      const size = readFileSync(path).length;
      await append(log, n, "b");
      const appended = readFileSync(path).length - size;
      counts.length = 0;
      const pages = await Promise.all(QUERIES.map((q) => trail.list(q)));
      expect(pages.map((p) => p.total)).toEqual(QUERIES.map(() => lineCount(path)));
      // each of these pages read the bytes appended, not the file (the first one that many, the
      // others nothing new once it remembered: they may run before it ends, then they read them too)
      expect(counts).toHaveLength(QUERIES.length);
      for (const count of counts) {
        expect(count.from?.end).toBeGreaterThan(0);
        expect(count.bytesRead).toBeLessThanOrEqual(appended);
      }
      expect(counts[0]).toMatchObject({ from: { end: size }, bytesRead: appended });
      expect(pages).toEqual(await freshPages(path));
    }
    counts.length = 0;
    expect((await trail.list({ limit: 5 })).total).toBe(lineCount(path));
    expect(counts).toMatchObject([{ from: { end: readFileSync(path).length }, bytesRead: 0 }]);
    await log.close();
  });

  it("a line cut by an interrupted write is counted, and counted once when its write completes", async () => {
    const path = tempPath();
    const trail = createFileAuditTrail(path);
    const [one, two, three, four, five] = [eventLine(), eventLine(), eventLine(), eventLine(), eventLine()];
    const cut = Math.floor(three.length / 2);
    writeFileSync(path, one + two + three.slice(0, cut));
    expect((await trail.list({ limit: 5 })).total).toBe(3);
    appendFileSync(path, three.slice(cut));
    expect((await trail.list({ limit: 5 })).total).toBe(3);
    appendFileSync(path, four + five.slice(0, 9));
    expect((await trail.list({ limit: 5 })).total).toBe(5);
    // every count but the first continued from the last newline-terminated line
    const bytes = (...lines: string[]): number => Buffer.byteLength(lines.join(""));
    expect(counts.map((c) => c.from?.end ?? 0)).toEqual([0, bytes(one, two), bytes(one, two, three)]);
    expect(await trail.list({ limit: 5 })).toEqual((await freshPages(path))[0]);
  });

  it("counts the whole file again when it was cut, rewritten or replaced: the totals are not stale", async () => {
    const path = tempPath();
    const trail = createFileAuditTrail(path);
    const lines = (n: number): string => Array.from({ length: n }, eventLine).join("");
    const first = lines(40);
    writeFileSync(path, first);
    expect((await trail.list({ limit: 5 })).total).toBe(40);
    appendFileSync(path, lines(2));
    expect((await trail.list({ limit: 5 })).total).toBe(42);
    expect(counts.map((c) => c.from?.end)).toEqual([undefined, Buffer.byteLength(first)]);

    // cut: shorter than what was counted
    truncateSync(path, Buffer.byteLength(first.split("\n").slice(0, 25).join("\n") + "\n"));
    counts.length = 0;
    expect(await trail.list({ limit: 5 })).toEqual((await freshPages(path))[0]);
    expect((await trail.list({ limit: 5 })).total).toBe(25);
    expect(counts[0]).toMatchObject({ from: undefined });

    // rewritten in place (same file), longer, with other lines: the last counted line is no longer at its place
    writeFileSync(path, lines(30));
    counts.length = 0;
    expect((await trail.list({ limit: 5 })).total).toBe(30);
    expect(counts[0]).toMatchObject({ from: undefined });

    // replaced by another file holding the same bytes and more: another inode, counted whole
    const other = `${path}.new`;
    writeFileSync(other, readFileSync(path, "utf8") + lines(3));
    renameSync(other, path);
    counts.length = 0;
    expect((await trail.list({ limit: 5 })).total).toBe(33);
    expect(counts[0]).toMatchObject({ from: undefined });

    // deleted: empty; created again: counted whole
    rmSync(path);
    expect(await trail.list({ limit: 5 })).toEqual({ events: [], total: 0, next: null });
    writeFileSync(path, lines(2));
    expect((await trail.list({ limit: 5 })).total).toBe(2);
  });

  it("continues only from an audit event: after a blank or garbage last line the next page counts whole", async () => {
    const path = tempPath();
    const trail = createFileAuditTrail(path);
    writeFileSync(path, "\n\n\n");
    expect((await trail.list({ limit: 5 })).total).toBe(3);
    // the same length, the same last line at the same place, one line fewer: found only by a whole count
    writeFileSync(path, "x\n\n");
    expect((await trail.list({ limit: 5 })).total).toBe(2);
    writeFileSync(path, `${eventLine()}not json\n`);
    expect((await trail.list({ limit: 5 })).total).toBe(2);
    appendFileSync(path, eventLine());
    expect((await trail.list({ limit: 5 })).total).toBe(3);
    appendFileSync(path, eventLine());
    expect((await trail.list({ limit: 5 })).total).toBe(4);
    expect(counts.map((c) => c.from === undefined)).toEqual([true, true, true, true, false]);
  });

  it("an old line edited in place that the check cannot see (same length, the last line unchanged) is counted right once fullEveryMs has passed", async () => {
    const path = tempPath();
    const clock = { ms: 0 };
    const trail = createFileAuditTrail(path, { now: () => clock.ms, fullEveryMs: 60_000 });
    const text = eventLine() + eventLine() + eventLine();
    writeFileSync(path, text);
    expect((await trail.list({ limit: 5 })).total).toBe(3);
    // two lines made one, the file's length and last line the same: a continued count does not read it
    writeFileSync(path, text.replace("\n", " "));
    expect((await trail.list({ limit: 5 })).total).toBe(3);
    clock.ms += 60_000;
    expect((await trail.list({ limit: 5 })).total).toBe(2);
    expect(counts.map((c) => c.from === undefined)).toEqual([true, false, true]);
  });

  it("gives the totals and pages of a fresh whole count after any appends, cuts, rewrites and replacements", async () => {
    const path = tempPath();
    /** The rest of the line an interrupted write left cut. */
    let rest = "";
    const lines = (n: number, torn: boolean): string => {
      const text = Array.from({ length: n }, eventLine).join("");
      if (!torn) return text;
      const last = eventLine();
      const cut = Math.floor(last.length / 2);
      rest = last.slice(cut);
      return text + last.slice(0, cut);
    };
    const step = fc.oneof(
      fc.record({ kind: fc.constant("append" as const), n: fc.nat(6), torn: fc.boolean() }),
      fc.record({ kind: fc.constant("complete" as const) }),
      fc.record({ kind: fc.constant("junk" as const), text: fc.constantFrom("\n", "not json\n", "{}\n") }),
      fc.record({ kind: fc.constant("cut" as const), fraction: fc.double({ min: 0, max: 1, noNaN: true }) }),
      fc.record({ kind: fc.constant("rewrite" as const), n: fc.nat(12), torn: fc.boolean() }),
      fc.record({ kind: fc.constant("replace" as const), n: fc.nat(12), torn: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        writeFileSync(path, lines(3, false));
        const trail = createFileAuditTrail(path);
        for (const s of steps) {
          if (s.kind === "append") appendFileSync(path, lines(s.n, s.torn));
          else if (s.kind === "complete") appendFileSync(path, rest);
          else if (s.kind === "junk") appendFileSync(path, s.text);
          else if (s.kind === "cut") truncateSync(path, Math.floor(readFileSync(path).length * s.fraction));
          else if (s.kind === "rewrite") writeFileSync(path, lines(s.n, s.torn));
          else {
            writeFileSync(`${path}.new`, lines(s.n, s.torn));
            renameSync(`${path}.new`, path);
          }
          const pages = await Promise.all(QUERIES.map((q) => trail.list(q)));
          expect(pages).toEqual(await freshPages(path));
          expect(pages[0]?.total).toBe(lineCount(path));
        }
      }),
      { numRuns: 80 },
    );
  });
});
