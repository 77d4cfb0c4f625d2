import { refusesPlainHttp, type PlainHttpListener } from "@acp/proxy/http-rules";
import { CliError, EXIT } from "../exit-codes.js";

/** The listeners a person starts with `--bind` that refuse plain HTTP beyond loopback (`acp proxy --http`: its own). */
type Listener = "serve" | "claim serve";

/** What would cross the network readable, per listener. */
const CARRIED: Readonly<Record<Listener, string>> = {
  serve: "the bearer tokens, console sign-in links and session cookies",
  "claim serve": "the agents' bearer tokens, claim codes, preview links and session cookies",
};

/** The ways to TLS, per listener, in its own flags. */
const WAYS_OUT: Readonly<Record<Listener, string>> = {
  serve:
    "serve HTTPS (--tls-cert FILE --tls-key FILE), keep --bind 127.0.0.1 behind a TLS-terminating proxy " +
    "(--public-url https://…), give an https:// --public-url when the proxy in front ends TLS",
  "claim serve":
    "keep --bind 127.0.0.1 behind a TLS-terminating proxy and say so with --tls, give --tls when the proxy in " +
    "front (on another machine of a private network) ends TLS",
};

/** Where the risk can be accepted besides the flag. */
const CONFIG_KEY: Readonly<Record<Listener, string>> = {
  serve: " (or serve.insecure_plain_http: true)",
  "claim serve": "",
};

/**
 * Stops `acp serve` or `acp claim serve` before it opens anything (exit 2) when it would listen beyond loopback over
 * plain HTTP with nobody accepting the risk ({@link refusesPlainHttp}, the rule `acp proxy --http` keeps too),
 * saying what would cross the network in clear text and the ways to TLS.
 */
export function checkPlainHttp(listener: Listener, bind: PlainHttpListener): void {
  if (!refusesPlainHttp(bind)) return;
  throw new CliError(
    `--bind \`${bind.bind}\` is beyond loopback over plain HTTP: ${CARRIED[listener]} would cross the network in ` +
      `clear text; ${WAYS_OUT[listener]}, or accept the risk on a network you trust with --insecure-plain-http` +
      CONFIG_KEY[listener],
    EXIT.usage,
  );
}
