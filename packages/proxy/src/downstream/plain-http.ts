import { isLoopbackAddress } from "./bearer-auth.js";

/** Where a listener binds and what protects what crosses the network to it. */
export interface PlainHttpListener {
  /** The address it binds (`--bind`). */
  readonly bind: string;
  /**
   * TLS protects it: here (`acp serve --tls-cert`), or ended by a proxy in front (an `https://` public URL,
   * `acp claim serve --tls`).
   */
  readonly tls: boolean;
  /** The operator accepts clear text on a network they trust (`--insecure-plain-http`, `*.insecure_plain_http`). */
  readonly insecurePlainHttp: boolean;
}

/**
 * Whether a listener must not start: beyond loopback over plain HTTP, with nobody accepting the risk. What such a
 * listener carries (bearer tokens, console sign-in links and cookies, claim codes, every call and result) would
 * cross the network readable by anyone on the path. The one rule of `acp serve`, `acp proxy --http` and
 * `acp claim serve`; loopback never leaves the machine.
 */
export function refusesPlainHttp(listener: PlainHttpListener): boolean {
  return !isLoopbackAddress(listener.bind) && !listener.tls && !listener.insecurePlainHttp;
}

/** Whether a listener that starts serves plain HTTP beyond loopback (it then warns at every start). */
export function servesPlainHttpBeyondLoopback(listener: Omit<PlainHttpListener, "insecurePlainHttp">): boolean {
  return refusesPlainHttp({ ...listener, insecurePlainHttp: false });
}
