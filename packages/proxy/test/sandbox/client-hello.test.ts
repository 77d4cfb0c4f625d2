/**
 * The ClientHello parser: real ClientHellos from node:tls, hand-built ones that break a rule (two server
 * names, a cut-short extension), and properties over arbitrary bytes, prefixes and record boundaries.
 */
import { connect as netConnect, createServer, type AddressInfo } from "node:net";
import { connect as tlsConnect } from "node:tls";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_CLIENT_HELLO_BYTES, readClientHello } from "../../src/sandbox/client-hello.js";
import { serverNameFits } from "../../src/sandbox/tls-screen.js";

/** The first bytes node:tls sends (its ClientHello), with `servername` or without. */
async function realHello(servername?: string): Promise<Buffer> {
  let done: (b: Buffer) => void = () => undefined;
  const got = new Promise<Buffer>((resolve) => (done = resolve));
  let bytes = Buffer.alloc(0);
  const server = createServer((s) => {
    s.on("data", (d: Buffer) => {
      bytes = Buffer.concat([bytes, d]);
      const length = bytes.length >= 5 ? 5 + bytes.readUInt16BE(3) : Infinity;
      if (bytes.length >= length) {
        s.destroy();
        done(bytes.subarray(0, length));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const socket = netConnect((server.address() as AddressInfo).port, "127.0.0.1");
  const t = tlsConnect({ socket, ...(servername !== undefined ? { servername } : {}) });
  t.on("error", () => undefined);
  const hello = await got;
  server.close();
  return hello;
}

/** The handshake message of a one-record ClientHello, cut into records at `cuts`. */
function refragment(hello: Buffer, sizes: number[]): Buffer {
  const message = hello.subarray(5);
  const records: Buffer[] = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= message.length) break;
    const part = message.subarray(at, at + size);
    records.push(Buffer.from([0x16, 0x03, 0x01, part.length >> 8, part.length & 0xff]), part);
    at += part.length;
  }
  if (at < message.length) {
    const part = message.subarray(at);
    records.push(Buffer.from([0x16, 0x03, 0x01, part.length >> 8, part.length & 0xff]), part);
  }
  return Buffer.concat(records);
}

const u16 = (n: number): number[] => [n >> 8, n & 0xff];

/** A hand-built ClientHello with the given extensions (type, data). */
function built(extensions: [number, number[]][]): Buffer {
  const ext = extensions.flatMap(([type, data]) => [...u16(type), ...u16(data.length), ...data]);
  const body = [
    0x03,
    0x03,
    ...new Array<number>(32).fill(7),
    0, // session id
    ...u16(2),
    0x13,
    0x01, // one suite
    1,
    0, // null compression
    ...u16(ext.length),
    ...ext,
  ];
  const message = [0x01, 0, ...u16(body.length), ...body];
  return Buffer.from([0x16, 0x03, 0x01, ...u16(message.length), ...message]);
}

/** A server_name extension's data naming `names` (all host_name). */
function sni(...names: string[]): number[] {
  const list = names.flatMap((n) => [0, ...u16(n.length), ...Buffer.from(n, "latin1")]);
  return [...u16(list.length), ...list];
}

let withName: Buffer;
let without: Buffer;
beforeAll(async () => {
  withName = await realHello("api.example.com");
  without = await realHello();
});

describe("readClientHello", () => {
  it("reads the server name of node:tls's ClientHello, and none when it sends none", () => {
    expect(readClientHello(withName)).toEqual({ kind: "hello", serverName: "api.example.com" });
    expect(readClientHello(without)).toEqual({ kind: "hello", serverName: null });
  });

  it("says not_tls for another protocol's first bytes, incomplete for none", () => {
    expect(readClientHello(Buffer.from("GET / HTTP/1.1\r\n"))).toEqual({ kind: "not_tls" });
    expect(readClientHello(Buffer.from("SSH-2.0-x\r\n"))).toEqual({ kind: "not_tls" });
    expect(readClientHello(Buffer.alloc(0))).toEqual({ kind: "incomplete" });
  });

  it("refuses what breaks a rule: two host names, two server_name extensions, a cut-short or non-ASCII name", () => {
    expect(readClientHello(built([[0, sni("a.example")]]))).toEqual({ kind: "hello", serverName: "a.example" });
    expect(readClientHello(built([[0, sni("a.example", "evil.example")]])).kind).toBe("malformed");
    expect(
      readClientHello(
        built([
          [0, sni("a.example")],
          [0, sni("evil.example")],
        ]),
      ).kind,
    ).toBe("malformed");
    const cut = sni("a.example");
    cut[1] = (cut[1] ?? 0) + 1; // the list claims a byte more than there is
    expect(readClientHello(built([[0, cut]])).kind).toBe("malformed");
    expect(readClientHello(built([[0, sni("a.exa\u00e9mple")]])).kind).toBe("malformed");
    expect(readClientHello(built([[0, sni("a.example\u0000evil.example")]])).kind).toBe("malformed");
    expect(readClientHello(built([[0, [0, 0]]])).kind).toBe("malformed");
  });

  it("refuses a handshake that is not a ClientHello, and one longer than it will wait for", () => {
    const serverHello = Buffer.from(withName);
    serverHello[5] = 0x02;
    expect(readClientHello(serverHello).kind).toBe("malformed");
    const huge = Buffer.from([0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0x01, 0x00, 0x00]);
    expect(readClientHello(huge)).toEqual({ kind: "malformed", why: `a ClientHello of ${4 + 0x010000} bytes` });
    expect(MAX_CLIENT_HELLO_BYTES).toBeLessThan(4 + 0x010000);
  });

  it("never throws on arbitrary bytes, after a TLS record header or not", () => {
    fc.assert(
      fc.property(fc.boolean(), fc.uint8Array({ maxLength: 600 }), (header, tail) => {
        const bytes = header ? Buffer.concat([Buffer.from([0x16, 0x03, 0x01]), tail]) : Buffer.from(tail);
        const read = readClientHello(bytes);
        expect(["incomplete", "not_tls", "malformed", "hello"]).toContain(read.kind);
      }),
    );
  });

  it("never throws on a real ClientHello with bytes changed, and never reads a name that is not in it", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        (changes) => {
          const bytes = Buffer.from(withName);
          for (const [at, value] of changes) bytes[at % bytes.length] = value;
          const read = readClientHello(bytes);
          if (read.kind === "hello" && read.serverName !== null) {
            expect(bytes.includes(Buffer.from(read.serverName, "latin1"))).toBe(true);
          }
        },
      ),
    );
  });

  it("says incomplete for every prefix of a ClientHello", () => {
    for (let n = 1; n < withName.length; n++) expect(readClientHello(withName.subarray(0, n)).kind).toBe("incomplete");
  });

  it("reads the same name however the ClientHello is cut into records", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 400 }), { maxLength: 20 }), (sizes) => {
        expect(readClientHello(refragment(withName, sizes))).toEqual({ kind: "hello", serverName: "api.example.com" });
      }),
    );
  });
});

describe("serverNameFits", () => {
  it("compares case-insensitively, a trailing dot ignored; no name fits an IP address only", () => {
    expect(serverNameFits("api.example.com", "API.Example.com.")).toBe(true);
    expect(serverNameFits("api.example.com.", "api.example.com")).toBe(true);
    expect(serverNameFits("api.example.com", "evil.example")).toBe(false);
    expect(serverNameFits("api.example.com", "api.example.com.evil.example")).toBe(false);
    expect(serverNameFits("api.example.com", null)).toBe(false);
    expect(serverNameFits("10.0.0.5", null)).toBe(true);
    expect(serverNameFits("[2001:db8::1]", null)).toBe(true);
    expect(serverNameFits("10.0.0.5", "evil.example")).toBe(false);
  });
});
