import { closeSync, openSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import {
  AUDIT_EVENT_TYPES,
  computeEventHash,
  createAuditEventBody,
  sealAuditLine,
  type AuditEventInput,
  type AuditMetadata,
} from "@acp/core";
import { afterAll, describe, expect, it } from "vitest";
import { scanAuditLog } from "../../src/audit/index.js";
import { hashOfCanonicalLine } from "../../src/audit/scan-log.js";
import { tempHomes } from "./audit-fixture.js";

const homes = tempHomes();
afterAll(homes.cleanup);

// strings with what could confuse a byte search: quotes, backslashes, the member's own text, non-ASCII
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme" }),
  fc.constantFrom(',"event_hash":"sha256:', '"event_hash"', '\\",\\"event_hash\\":\\"', "é\u2028\u{1F600}"),
);
const nullable = fc.option(text, { nil: null });
const metadata = fc.dictionary(
  fc.oneof(fc.string(), fc.constantFrom("event_hash", "after_event_hash", "checkpoint")),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as never),
  { maxKeys: 5 },
) as fc.Arbitrary<AuditMetadata>;
const input: fc.Arbitrary<AuditEventInput> = fc.record({
  event_type: fc.constantFrom(...AUDIT_EVENT_TYPES),
  request_id: nullable,
  agent: nullable,
  tool: nullable,
  category: nullable,
  risk_level: nullable,
  decision: nullable,
  policy_rule: nullable,
  response_time_ms: fc.option(fc.integer(), { nil: null }),
  metadata,
});
const previous = fc.option(
  fc.stringMatching(/^[0-9a-f]{64}$/).map((hex) => `sha256:${hex}`),
  { nil: null },
);
const sealed = fc
  .tuple(input, previous)
  .map(([i, p]) =>
    sealAuditLine(createAuditEventBody(i, { id: "ae_1", timestamp: "2026-11-26T00:00:00.000Z", previousEventHash: p })),
  );

describe("the head hash read from a line's bytes (hashOfCanonicalLine)", () => {
  it("is the line's event_hash, as parsing, canonicalizing and hashing gives it, for every line the writer makes", () => {
    fc.assert(
      fc.property(sealed, ({ event, line }) => {
        const bytes = Buffer.from(line, "utf8");
        expect(hashOfCanonicalLine(bytes)).toBe(event.event_hash);
        expect(computeEventHash(JSON.parse(line) as typeof event)).toBe(event.event_hash);
        // at an offset inside a larger buffer too
        const framed = Buffer.concat([Buffer.from("xx\n"), bytes, Buffer.from("\n")]);
        expect(hashOfCanonicalLine(framed.subarray(3, 3 + bytes.length))).toBe(event.event_hash);
      }),
      { numRuns: 500 },
    );
  });

  it("gives nothing for a line with any one byte changed", () => {
    fc.assert(
      fc.property(sealed, fc.nat(), fc.integer({ min: 1, max: 255 }), ({ line }, at, delta) => {
        const bytes = Buffer.from(line, "utf8");
        const k = at % bytes.length;
        bytes[k] = ((bytes[k] as number) + delta) % 256;
        expect(hashOfCanonicalLine(bytes)).toBeUndefined();
      }),
      { numRuns: 1000 },
    );
  });
});

describe("scanAuditLog's check of the last line", () => {
  function scan(content: string): string | null {
    const path = join(homes.make(), "audit.jsonl");
    writeFileSync(path, content);
    const fd = openSync(path, "r");
    try {
      return scanAuditLog(fd, { size: 0, count: 0, head: null, sinceCheckpoint: 0 }, path).position.head;
    } finally {
      closeSync(fd);
    }
  }
  const one = sealAuditLine(
    createAuditEventBody(
      { event_type: "tool_call_completed", tool: "echo", metadata: { call_id: "c1", is_error: false } },
      { id: "ae_1", timestamp: "2026-11-26T00:00:00.000Z", previousEventHash: null },
    ),
  );

  it("takes the head of a canonical line", () => {
    expect(scan(`${one.line}\n`)).toBe(one.event.event_hash);
  });

  it("still takes an intact line in another form (keys reordered, spaces) the long way", () => {
    const event = JSON.parse(one.line) as Record<string, unknown>;
    const reordered = Object.fromEntries(Object.entries(event).reverse());
    const other = JSON.stringify(reordered, null, 1).replace(/\n/g, "");
    expect(hashOfCanonicalLine(Buffer.from(other))).toBeUndefined();
    expect(scan(`${other}\n`)).toBe(one.event.event_hash);
  });

  it("refuses a damaged last line, in either form", () => {
    const damaged = one.line.replace('"echo"', '"echp"');
    expect(() => scan(`${damaged}\n`)).toThrow(/not an intact audit event/);
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(damaged) as object).reverse()));
    expect(() => scan(`${reordered}\n`)).toThrow(/not an intact audit event/);
  });

  it("refuses a last line longer than any event without holding it, in one read or across many", () => {
    const long = "x".repeat(9 * 1024 * 1024);
    expect(() => scan(`${one.line}\n${long}\n`)).toThrow(/2: last line is not an intact audit event/);
    expect(() => scan(`${one.line}\n${long}${one.line}\n`)).toThrow(/not an intact audit event/);
    expect(scan(`${long}\n${one.line}\n`)).toBe(one.event.event_hash);
  });
});

describe("scanAuditLog's torn tail", () => {
  it("says where the bytes after the last newline lie rather than holding them: a tail of any size costs a chunk", () => {
    const path = join(homes.make(), "audit.jsonl");
    const one = sealAuditLine(
      createAuditEventBody(
        { event_type: "tool_call_completed", tool: "echo" },
        { id: "ae_1", timestamp: "2026-11-26T00:00:00.000Z", previousEventHash: null },
      ),
    );
    writeFileSync(path, `${one.line}\n`);
    const size = Buffer.byteLength(one.line) + 1;
    truncateSync(path, size + 64 * 1024 * 1024); // 64 MiB of zeros and no newline: a sparse file
    const fd = openSync(path, "r");
    try {
      const scan = scanAuditLog(fd, { size: 0, count: 0, head: null, sinceCheckpoint: 0 }, path);
      expect(scan.position).toMatchObject({ size, count: 1, head: one.event.event_hash });
      expect(scan.torn).toEqual({ start: size, bytes: 64 * 1024 * 1024 });
    } finally {
      closeSync(fd);
    }
  });
});

describe("scanAuditLog's count of lines and of lines since the last checkpoint", () => {
  const marker = '"event_type":"checkpoint"';
  const last = sealAuditLine(
    createAuditEventBody(
      { event_type: "tool_call_completed", tool: "echo" },
      { id: "ae_9", timestamp: "2026-11-26T00:00:00.000Z", previousEventHash: null },
    ),
  ).line;

  /** What the scan should find from line `from` on: counted line by line. */
  function expected(lines: string[], from: number, since0: number): { count: number; sinceCheckpoint: number } {
    let sinceCheckpoint = since0;
    for (const line of lines.slice(from)) sinceCheckpoint = line.includes(marker) ? 0 : sinceCheckpoint + 1;
    return { count: lines.length, sinceCheckpoint };
  }

  function scanFrom(lines: string[], from: number, since0: number, torn = ""): ReturnType<typeof scanAuditLog> {
    const path = join(homes.make(), "audit.jsonl");
    writeFileSync(path, lines.map((l) => `${l}\n`).join("") + torn);
    const size = Buffer.byteLength(
      lines
        .slice(0, from)
        .map((l) => `${l}\n`)
        .join(""),
    );
    const fd = openSync(path, "r");
    try {
      return scanAuditLog(fd, { size, count: from, head: null, sinceCheckpoint: since0 }, path);
    } finally {
      closeSync(fd);
    }
  }

  it("counts as a line-by-line reading does, from any line on, markers anywhere", () => {
    const line = fc.oneof(
      fc.string({ unit: "grapheme" }).map((t) => t.replace(/\n/g, " ")),
      fc.tuple(fc.string(), fc.string()).map(([a, b]) => `${a}${marker}${b}${marker}`.replace(/\n/g, " ")),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), fc.nat(), fc.nat(5), (body, at, since0) => {
        const lines = [...body, last];
        const from = at % lines.length;
        const scan = scanFrom(lines, from, since0, "partial");
        expect({ count: scan.position.count, sinceCheckpoint: scan.position.sinceCheckpoint }).toEqual(
          expected(lines, from, since0),
        );
        expect(scan.torn).toEqual({ start: scan.position.size, bytes: "partial".length });
      }),
      { numRuns: 200 },
    );
  });

  it("across its 1 MiB reads, with a checkpoint line cut by the read boundary", () => {
    const filler = "x".repeat(1000);
    const lines: string[] = [];
    let bytes = 0;
    while (bytes + filler.length + 1 < 1024 * 1024 - 100) {
      lines.push(filler);
      bytes += filler.length + 1;
    }
    // this line spans the boundary at 1 MiB with its marker across it
    lines.push(`${"y".repeat(1024 * 1024 - bytes - Math.floor(marker.length / 2))}${marker}tail`);
    lines.push("after", last);
    const scan = scanFrom(lines, 0, 0);
    expect(scan.position.count).toBe(lines.length);
    expect(scan.position.sinceCheckpoint).toBe(2);
    expect(scan.torn).toBeNull();
  });
});
