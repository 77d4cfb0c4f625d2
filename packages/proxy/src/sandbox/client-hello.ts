/**
 * Reads the TLS server name (SNI, RFC 6066 §3) from the first bytes a client sends in a CONNECT tunnel: the
 * TLS records holding its ClientHello (RFC 8446 §4.1.2, RFC 5246 §7.4.1.2). Nothing is decrypted; the bytes
 * are parsed strictly and with bounds (every length is checked against what is left, the handshake message
 * may span records but never more than `MAX_CLIENT_HELLO_BYTES`), and anything that is not a well-formed
 * ClientHello is `malformed`: the caller refuses it.
 */

/** The most bytes read while waiting for a complete ClientHello (records and their headers). */
export const MAX_CLIENT_HELLO_BYTES = 64 * 1024;

/** What the first bytes are. */
export type ClientHelloRead =
  /** More bytes are needed (the ClientHello is not complete yet). */
  | { readonly kind: "incomplete" }
  /** The first byte is not a TLS handshake record: another protocol (or SSL 2). */
  | { readonly kind: "not_tls" }
  /** A TLS handshake that is not a well-formed ClientHello. */
  | { readonly kind: "malformed"; readonly why: string }
  /** A ClientHello; `serverName` is its `host_name`, or null when it sends no server_name extension. */
  | { readonly kind: "hello"; readonly serverName: string | null };

const HANDSHAKE = 0x16;
const CLIENT_HELLO = 0x01;
const SERVER_NAME = 0x0000;
const HOST_NAME = 0x00;
const MAX_RECORD = 16_384 + 256; // a TLSPlaintext fragment is at most 2^14; a little slack for old stacks

/** Parses the first bytes of a tunnel. */
export function readClientHello(bytes: Uint8Array): ClientHelloRead {
  if (bytes.length === 0) return { kind: "incomplete" };
  if (bytes[0] !== HANDSHAKE) return { kind: "not_tls" };
  // the handshake message, gathered from the records that carry it
  const message: number[] = [];
  let at = 0;
  let needed: number | null = null;
  while (needed === null || message.length < needed) {
    if (at + 5 > bytes.length) return { kind: "incomplete" };
    if (bytes[at] !== HANDSHAKE)
      return { kind: "malformed", why: "the ClientHello is interleaved with another record" };
    if (bytes[at + 1] !== 0x03) return { kind: "malformed", why: "not a TLS record version" };
    const length = u16(bytes, at + 3);
    if (length === 0 || length > MAX_RECORD) return { kind: "malformed", why: `a record of ${length} bytes` };
    if (at + 5 + length > bytes.length) return { kind: "incomplete" };
    for (let i = at + 5; i < at + 5 + length; i++) message.push(bytes[i] ?? 0);
    at += 5 + length;
    if (needed === null && message.length >= 4) {
      if (message[0] !== CLIENT_HELLO)
        return { kind: "malformed", why: "the first handshake message is not a ClientHello" };
      needed = 4 + (((message[1] ?? 0) << 16) | ((message[2] ?? 0) << 8) | (message[3] ?? 0));
      if (needed > MAX_CLIENT_HELLO_BYTES) return { kind: "malformed", why: `a ClientHello of ${needed} bytes` };
    }
  }
  return parseHello(Uint8Array.from(message.slice(4, needed)));
}

/** The ClientHello body (after its 4-byte handshake header), exactly. */
function parseHello(body: Uint8Array): ClientHelloRead {
  const r = new Reader(body);
  r.skip(2 + 32); // legacy_version, random
  r.skip(r.u8()); // legacy_session_id
  const suites = r.u16();
  if (suites < 2 || suites % 2 !== 0) return { kind: "malformed", why: "bad cipher_suites" };
  r.skip(suites);
  const compression = r.u8();
  if (compression < 1) return { kind: "malformed", why: "bad legacy_compression_methods" };
  r.skip(compression);
  if (r.failed) return { kind: "malformed", why: "the ClientHello is cut short" };
  if (r.left === 0) return { kind: "hello", serverName: null }; // no extensions at all
  const extensions = r.u16();
  if (r.failed || extensions !== r.left)
    return { kind: "malformed", why: "the extensions do not fill the ClientHello" };
  const seen = new Set<number>();
  let serverName: string | null = null;
  while (r.left > 0) {
    const type = r.u16();
    const length = r.u16();
    const data = r.bytes(length);
    if (r.failed || data === null) return { kind: "malformed", why: "an extension is cut short" };
    if (seen.has(type)) return { kind: "malformed", why: `extension ${type} appears twice` };
    seen.add(type);
    if (type === SERVER_NAME) {
      const name = parseServerName(data);
      if (typeof name !== "string") return name;
      serverName = name;
    }
  }
  return { kind: "hello", serverName };
}

/** The one `host_name` of a server_name extension (RFC 6066 §3: at most one of each type; ASCII). */
function parseServerName(data: Uint8Array): string | { kind: "malformed"; why: string } {
  const r = new Reader(data);
  const list = r.u16();
  if (r.failed || list !== r.left || list === 0) return { kind: "malformed", why: "bad server_name list" };
  let host: string | null = null;
  while (r.left > 0) {
    const type = r.u8();
    const length = r.u16();
    const name = r.bytes(length);
    if (r.failed || name === null) return { kind: "malformed", why: "a server name is cut short" };
    if (type !== HOST_NAME) continue; // unknown name types are skipped (none is defined)
    if (host !== null) return { kind: "malformed", why: "two host names in server_name" };
    if (length === 0 || name.some((b) => b <= 0x20 || b >= 0x7f)) {
      return { kind: "malformed", why: "a server name that is not a printable ASCII host name" };
    }
    host = String.fromCharCode(...name);
  }
  return host ?? { kind: "malformed", why: "server_name without a host name" };
}

function u16(bytes: Uint8Array, at: number): number {
  return ((bytes[at] ?? 0) << 8) | (bytes[at + 1] ?? 0);
}

/** A bounds-checked reader: reading past the end sets `failed` (and reads zeros). */
class Reader {
  private at = 0;
  failed = false;
  constructor(private readonly data: Uint8Array) {}
  get left(): number {
    return this.failed ? 0 : this.data.length - this.at;
  }
  private take(n: number): number {
    if (this.failed || n > this.data.length - this.at) {
      this.failed = true;
      return this.at;
    }
    const start = this.at;
    this.at += n;
    return start;
  }
  skip(n: number): void {
    this.take(n);
  }
  u8(): number {
    const at = this.take(1);
    return this.failed ? 0 : (this.data[at] ?? 0);
  }
  u16(): number {
    const at = this.take(2);
    return this.failed ? 0 : u16(this.data, at);
  }
  bytes(n: number): Uint8Array | null {
    const at = this.take(n);
    return this.failed ? null : this.data.subarray(at, at + n);
  }
}
