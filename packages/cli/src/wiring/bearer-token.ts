/** The bearer tokens `acp serve` and `acp proxy --http` take from the environment or the config. */
import { CliError, EXIT } from "../exit-codes.js";

/** The shortest token accepted (the same floor as `proxy.bearer_token` in config.yml). */
export const MIN_BEARER_TOKEN_LENGTH = 16;

/** The shortest webhook secret accepted (the HMAC key both ends share). */
export const MIN_WEBHOOK_SECRET_LENGTH = 16;

/** A webhook secret too short to be a key: the error to give, or null when it is long enough. */
export function webhookSecretProblem(source: string, secret: string): string | null {
  if (secret.length >= MIN_WEBHOOK_SECRET_LENGTH) return null;
  return `${source} is too short (${secret.length} characters): an HMAC key needs at least ${MIN_WEBHOOK_SECRET_LENGTH}; make one with \`openssl rand -hex 32\``;
}

/**
 * Checks a configured bearer token before anything starts: at least 16 characters, and only characters
 * a client can send after `Bearer ` (RFC 6750's token68: letters, digits, `-._~+/`, trailing `=`).
 * `source` names where it came from (`ACP_BRIDGE_TOKEN`, `serve.bearer_token`). Throws exit 4.
 */
export function checkBearerToken(source: string, token: string): string {
  if (token.length < MIN_BEARER_TOKEN_LENGTH) {
    throw new CliError(
      `${source} is too short (${token.length} characters): a bearer token needs at least ${MIN_BEARER_TOKEN_LENGTH}; make one with \`openssl rand -hex 32\``,
      EXIT.invalid,
    );
  }
  if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(token)) {
    throw new CliError(
      `${source} has characters a client cannot send in \`Authorization: Bearer …\` (use letters, digits and -._~+/, as \`openssl rand -hex 32\` gives)`,
      EXIT.invalid,
    );
  }
  return token;
}
