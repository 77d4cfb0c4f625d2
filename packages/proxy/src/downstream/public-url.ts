/**
 * A public URL: the origin browsers and clients use when `acp serve` or `acp proxy --http` sits behind a
 * reverse proxy or load balancer (`https://acp.example.com`), which may end TLS in front of it. A loopback
 * listener's `Host` check then also takes its host and its `Origin` check its origin; `acp serve` also makes
 * its links with it, and an `https:` one makes the console cookie `__Host-`, `Secure` and adds HSTS.
 */

/** A checked public URL. */
export interface PublicUrl {
  /** `https://acp.example.com` (scheme, host and a non-default port; no path). */
  readonly origin: string;
  /** The `Host` header a request to it carries (`acp.example.com`, `acp.example.com:8443`). */
  readonly host: string;
  /** Whether browsers reach it over TLS. */
  readonly https: boolean;
}

/** Checks `text` as a public URL: `http(s)://host[:port]` with no path, query, fragment or credentials. */
export function parsePublicUrl(text: string): { ok: true; value: PublicUrl } | { ok: false; message: string } {
  const shown = text.length > 100 ? `${text.slice(0, 100)}…` : text;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, message: `\`${shown}\` is not a URL (like https://acp.example.com)` };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return { ok: false, message: `\`${shown}\` is not an http:// or https:// URL` };
  }
  if (url.username !== "" || url.password !== "") {
    return { ok: false, message: "a public URL carries no user name or password" };
  }
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "" || /[?#]/.test(text)) {
    return {
      ok: false,
      message: `\`${shown}\` has a path, query or fragment: give the origin only (the service is served at the root of its host)`,
    };
  }
  return { ok: true, value: { origin: url.origin, host: url.host, https: url.protocol === "https:" } };
}
