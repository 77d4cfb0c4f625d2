/**
 * The first bytes the agent sends in a CONNECT tunnel, checked before any of them goes on: a tunnel is
 * decided for the host named in `CONNECT HOST:PORT`, and a TLS client names the site it wants again, in its
 * ClientHello's server name (SNI). A front shared by many sites (a CDN) serves whichever the SNI names, so an
 * agent let through to `a.example` could reach `evil.example` behind the same front by naming it there
 * (domain fronting). The tunnel goes on only when:
 *
 * - its first bytes are a TLS ClientHello whose server name is the CONNECT host (case-insensitive, a trailing
 *   dot ignored), or that names none while the CONNECT host is an IP address (clients send none for those);
 * - or they are not TLS at all and the port is not one of `tlsPorts` (443 by default): SSH, a database,
 *   a server that speaks first. On a TLS port anything else is refused (fail closed). When they are a plain
 *   HTTP request (`readRequestLine`), the verdict says so (`http`): the proxy then serves the tunnel request
 *   by request with the host decided, since a front routes plain HTTP by each request's `Host` header; a
 *   first line that stays incomplete (`MAX_REQUEST_LINE_BYTES`, `timeoutMs`) is refused.
 *
 * A malformed ClientHello is refused. The wait is bounded: `MAX_CLIENT_HELLO_BYTES` bytes, and
 * `timeoutMs` from the start on a TLS port, or from the first byte on another (a server that speaks first is
 * answered only after its banner, which the tunnel passes on meanwhile).
 */
import { isIP } from "node:net";
import type { Duplex } from "node:stream";
import { normalizeHost } from "./allow-list.js";
import { MAX_CLIENT_HELLO_BYTES, readClientHello } from "./client-hello.js";
import { MAX_REQUEST_LINE_BYTES, readRequestLine } from "./request-line.js";

/** Ports a tunnel must carry TLS on, by default. */
export const DEFAULT_TLS_PORTS: readonly number[] = [443];

/** How long the agent has to send its complete ClientHello, by default. */
export const DEFAULT_CLIENT_HELLO_TIMEOUT_MS = 10_000;

/** What the screen needs. */
export interface TlsScreenOptions {
  readonly host: string;
  readonly port: number;
  readonly tlsPorts: readonly number[];
  readonly timeoutMs: number;
  /**
   * Whether the far end has sent anything yet. When it spoke before the agent's first byte, the protocol is
   * one where the server speaks first (SSH, SMTP, a database), never HTTP: the agent's bytes pass as they are.
   */
  readonly serverSpoke?: () => boolean;
}

/** The verdict: the bytes read so far (to send on), or why the tunnel is refused. */
export type TlsScreenVerdict =
  /** `http`: the bytes are a plain HTTP/1 request (to be served request by request, never passed on as they are). */
  | { readonly ok: true; readonly bytes: Buffer; readonly serverName: string | null; readonly http?: true }
  /** `closed`: the agent closed the tunnel before anything was decided (nothing to record). */
  | { readonly ok: false; readonly reason: string; readonly serverName?: string; readonly closed?: true };

/** Whether a ClientHello's server name is the CONNECT host (or absent where a host has none: an IP address). */
export function serverNameFits(connectHost: string, serverName: string | null): boolean {
  const host = bare(connectHost);
  if (serverName === null) return isIP(host) !== 0;
  return bare(serverName) === host;
}

function bare(host: string): string {
  const h = normalizeHost(host);
  return h.endsWith(".") ? h.slice(0, -1) : h;
}

/**
 * Reads the agent's first bytes from `client` (after `head`, the bytes that came with the CONNECT request)
 * and decides. Leaves `client` paused with its listeners removed; the caller pipes it on, or destroys it.
 */
export function screenTunnel(client: Duplex, head: Buffer, options: TlsScreenOptions): Promise<TlsScreenVerdict> {
  const where = `\`${options.host}:${options.port}\``;
  const tlsPort = options.tlsPorts.includes(options.port);
  return new Promise((resolve) => {
    let buffered = head;
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    // what the clock waits for: a ClientHello (a TLS port, or TLS bytes), or the end of a plain first line
    let waiting: "client_hello" | "first_line" = "client_hello";
    // whether the far end spoke before the agent's first byte (taken once, at that byte)
    let serverFirst: boolean | undefined;
    const finish = (verdict: TlsScreenVerdict): void => {
      if (done) return;
      done = true;
      client.pause();
      client.off("data", onData);
      client.off("end", onClosed);
      client.off("close", onClosed);
      if (timer !== undefined) clearTimeout(timer);
      resolve(verdict);
    };
    const startClock = (): void => {
      if (timer !== undefined) return;
      timer = setTimeout(
        () =>
          finish({
            ok: false,
            reason:
              waiting === "client_hello"
                ? `the agent sent no complete TLS ClientHello through the tunnel to ${where} within ${duration(options.timeoutMs)}`
                : `the agent's first line through the tunnel to ${where} did not end within ${duration(options.timeoutMs)}, so it cannot be told from a plain HTTP request`,
          }),
        options.timeoutMs,
      );
      timer.unref();
    };
    const judge = (): void => {
      const read = readClientHello(buffered);
      if (read.kind === "incomplete") {
        if (buffered.length > MAX_CLIENT_HELLO_BYTES) {
          finish({
            ok: false,
            reason: `more than ${MAX_CLIENT_HELLO_BYTES} bytes through the tunnel to ${where} without a complete TLS ClientHello`,
          });
        } else if (buffered.length > 0) startClock();
        return;
      }
      if (read.kind === "not_tls" && tlsPort) {
        finish({
          ok: false,
          reason: `the tunnel to ${where} carries TLS only, and the agent's first bytes are not a TLS ClientHello`,
        });
      } else if (read.kind === "not_tls") {
        serverFirst ??= options.serverSpoke?.() === true;
        const line = serverFirst ? "not_http" : readRequestLine(buffered);
        if (line === "http") finish({ ok: true, bytes: buffered, serverName: null, http: true });
        else if (line === "not_http") finish({ ok: true, bytes: buffered, serverName: null });
        else if (buffered.length > MAX_REQUEST_LINE_BYTES) {
          finish({
            ok: false,
            reason: `more than ${MAX_REQUEST_LINE_BYTES} bytes through the tunnel to ${where} without the end of the first line, so it cannot be told from a plain HTTP request`,
          });
        } else {
          waiting = "first_line";
          startClock();
        }
      } else if (read.kind === "malformed") {
        finish({ ok: false, reason: `a malformed TLS ClientHello through the tunnel to ${where}: ${read.why}` });
      } else if (serverNameFits(options.host, read.serverName)) {
        finish({ ok: true, bytes: buffered, serverName: read.serverName });
      } else if (read.serverName === null) {
        finish({
          ok: false,
          reason: `the TLS ClientHello through the tunnel to ${where} names no server (SNI); it must name \`${options.host}\``,
        });
      } else {
        finish({
          ok: false,
          serverName: read.serverName,
          reason: `the TLS ClientHello through the tunnel to ${where} names \`${read.serverName}\`, another host than the one the tunnel was let through for`,
        });
      }
    };
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      judge();
    };
    const onClosed = (): void =>
      finish({ ok: false, closed: true, reason: `the agent closed the tunnel to ${where} before sending anything` });
    client.on("data", onData);
    client.once("end", onClosed);
    client.once("close", onClosed);
    if (tlsPort) startClock();
    judge();
    if (!done) client.resume();
  });
}

function duration(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
