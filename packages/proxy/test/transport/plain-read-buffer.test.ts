import { PassThrough } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ReadBuffer } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { JSONRPCMessageSchema, RELATED_TASK_META_KEY, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { PlainReadBuffer, plainMessage, usePlainReadBuffer } from "../../src/transport/plain-read-buffer.js";

// JSON values shaped like JSON-RPC messages, well-formed or nearly so: every member the fast path looks at
// takes good and bad values, and objects sometimes carry extra or dangerous keys.
const id = fc.oneof(
  { arbitrary: fc.oneof(fc.string({ maxLength: 6 }), fc.integer()), weight: 4 },
  { arbitrary: fc.constantFrom(1.5, 2 ** 53, -(2 ** 60), null, true, "acp-relay-1"), weight: 1 },
);
const scalar = fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.boolean(), fc.constant(null));
const loose = fc.dictionary(
  fc.constantFrom("name", "arguments", "x", "content", "__proto__", "constructor", "toString"),
  fc.oneof(scalar, fc.dictionary(fc.string({ maxLength: 3 }), scalar, { maxKeys: 2 })),
  { maxKeys: 3 },
);
const meta = fc.oneof(
  fc.record({ progressToken: id }, { requiredKeys: [] }),
  fc.record({ progressToken: id, [RELATED_TASK_META_KEY]: fc.oneof(fc.record({ taskId: fc.string() }), scalar) }),
  loose,
  scalar,
);
const params = fc.oneof(
  loose,
  fc.tuple(loose, meta).map(([p, m]) => ({ ...p, _meta: m })),
  scalar,
  fc.array(scalar, { maxLength: 2 }),
);
const message = fc.oneof(
  fc.record(
    {
      jsonrpc: fc.constantFrom("2.0", "2.0", "1.0"),
      id,
      method: fc.oneof(fc.constantFrom("tools/call", "ping"), scalar),
      params,
    },
    { requiredKeys: ["jsonrpc", "id", "method"] },
  ),
  fc.record({ jsonrpc: fc.constant("2.0"), id, method: fc.string({ maxLength: 4 }), extra: scalar }),
  fc.record(
    {
      jsonrpc: fc.constantFrom("2.0", "2.0", "1.0"),
      id,
      result: fc.oneof(
        loose,
        fc.tuple(loose, meta).map(([r, m]) => ({ ...r, _meta: m })),
        scalar,
      ),
    },
    { requiredKeys: ["jsonrpc", "id", "result"] },
  ),
  fc.record({
    jsonrpc: fc.constant("2.0"),
    id,
    result: loose,
    error: fc.record({ code: fc.integer(), message: fc.string() }),
  }),
  fc.record(
    { jsonrpc: fc.constant("2.0"), method: fc.string({ maxLength: 4 }), params },
    { requiredKeys: ["jsonrpc"] },
  ),
);
/**
 * A value's shape, for comparing: own keys in sorted order (`__proto__` included) and whether each object has
 * Object's prototype; vitest's own equality treats a `constructor` member as the object's type.
 */
function shape(value: unknown): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(shape).join(",")}]`;
  const proto = Object.getPrototypeOf(value) === Object.prototype ? "" : "!proto";
  const keys = Object.keys(value).sort();
  return `${proto}{${keys.map((k) => `${JSON.stringify(k)}:${shape((value as Record<string, unknown>)[k])}`).join(",")}}`;
}

/** As it arrives on the wire: the message's JSON text, parsed (own `__proto__` keys and all). */
const wire = message.map((m) => JSON.parse(JSON.stringify(m)) as unknown);

describe("PlainReadBuffer", () => {
  it("takes as plain only what the SDK's schema accepts, and the schema gives back the same message", () => {
    let plain = 0;
    fc.assert(
      fc.property(wire, (value) => {
        if (!plainMessage(value)) return;
        plain++;
        const parsed = JSONRPCMessageSchema.safeParse(value);
        expect(parsed.success).toBe(true);
        expect(shape(parsed.data)).toBe(shape(value));
      }),
      { numRuns: 5000 },
    );
    expect(plain).toBeGreaterThan(200); // the property saw plain messages, not only refusals
  });

  it("reads a chunked stream into the same messages and the same errors as the SDK's ReadBuffer", () => {
    const line = fc.oneof(
      wire.map((v) => JSON.stringify(v)),
      fc.constantFrom("not json", "{", "[]", "null", '{"jsonrpc":"2.0","id":1,"result":{}}\r'),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 5 }), (lines, cuts) => {
        const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(""));
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const run = (buffer: { append(b: Buffer): void; readMessage(): JSONRPCMessage | null }) => {
          const out: unknown[] = [];
          let from = 0;
          for (const to of [...points, bytes.length]) {
            buffer.append(bytes.subarray(from, to));
            from = to;
            for (;;) {
              try {
                const m = buffer.readMessage();
                if (m === null) break;
                out.push(m);
              } catch (err) {
                out.push(`error: ${(err as Error).name}`);
              }
            }
          }
          return out;
        };
        expect(run(new PlainReadBuffer()).map(shape)).toEqual(run(new ReadBuffer()).map(shape));
      }),
      { numRuns: 1000 },
    );
  });

  it("keeps the size limit and its error, and clears", () => {
    const ours = new PlainReadBuffer(8);
    ours.append(Buffer.from("{}"));
    expect(() => ours.append(Buffer.from("1234567"))).toThrow("ReadBuffer exceeded maximum size of 8 bytes");
    expect(ours.readMessage()).toBeNull();
    ours.append(Buffer.from('{"jsonrpc":"2.0","id":1,"result":{}}\n'.slice(0, 8)));
    ours.clear();
    expect(ours.readMessage()).toBeNull();
  });

  it("still refuses what the schema refuses (a request with an unknown member, a fractional id)", () => {
    const buffer = new PlainReadBuffer();
    buffer.append(
      Buffer.from('{"jsonrpc":"2.0","id":1,"method":"x","foo":1}\n{"jsonrpc":"2.0","id":1.5,"result":{}}\n'),
    );
    expect(() => buffer.readMessage()).toThrow();
    expect(() => buffer.readMessage()).toThrow();
  });

  it("is installed in both SDK stdio transports (fails when an SDK upgrade moves their buffer)", () => {
    const server = new StdioServerTransport(new PassThrough(), new PassThrough());
    expect(usePlainReadBuffer(server)).toBe(true);
    expect((server as unknown as { _readBuffer: unknown })._readBuffer).toBeInstanceOf(PlainReadBuffer);
    const client = new StdioClientTransport({ command: process.execPath, args: ["-e", ""] });
    expect(usePlainReadBuffer(client)).toBe(true);
    expect(usePlainReadBuffer({})).toBe(false);
  });
});
