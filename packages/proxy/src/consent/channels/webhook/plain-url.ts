import { isLoopbackAddress } from "../../../downstream/bearer-auth.js";

/**
 * What to say at start when `webhook.url` is plain `http://` to another machine, or null: every consent request
 * (arguments redacted) and the URL's `user:password` (sent as HTTP Basic) would cross the network readable, as the
 * tokens of `acp serve` or `acp proxy --http` would beyond loopback. Only the host is named: receivers often carry
 * a secret in the URL's path, query or user info.
 */
export function webhookUrlWarning(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== "http:" || isLoopbackAddress(parsed.hostname)) return null;
  const basic = parsed.username !== "" || parsed.password !== "" ? " and the URL's user:password (HTTP Basic)" : "";
  return (
    `\`webhook.url\` is plain http:// to ${parsed.host}: every consent request (arguments redacted)${basic} ` +
    "crosses the network in clear text; give the receiver an https:// URL"
  );
}
