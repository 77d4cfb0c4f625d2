import { Buffer } from "node:buffer";
import { spellSecrets, type SecretSpellings } from "./secret-variants.js";

/** Keys whose string is base64 of binary content in MCP: a resource's `blob`, an image's or audio's `data`. */
export const BASE64_FIELDS: ReadonlySet<string> = new Set(["blob", "data"]);

/** Standard base64 with its padding: what MCP's `blob` and `data` hold. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const BYTE_SPELLINGS = new WeakMap<SecretSpellings, SecretSpellings>();

/** The secrets as decoded bytes hold them (each UTF-8 byte one `latin1` character), spelled; worked out once per list. */
function byteSpellingsOf(secrets: SecretSpellings): SecretSpellings {
  let spelled = BYTE_SPELLINGS.get(secrets);
  if (spelled === undefined) {
    spelled = spellSecrets(secrets.raw.map((s) => Buffer.from(s, "utf8").toString("latin1")));
    BYTE_SPELLINGS.set(secrets, spelled);
  }
  return spelled;
}

/**
 * `value` (base64 of binary content) with every secret in its decoded bytes replaced by `hide`, encoded
 * again: a resource's blob or an image that holds an injected value comes back valid base64 with the
 * value's bytes hidden, rather than as base64 with a placeholder in it, which no client decodes (it
 * refuses the whole answer). `undefined` when `value` is not base64 or its bytes hold no secret.
 */
export function redactBase64Bytes(
  value: string,
  secrets: SecretSpellings,
  hide: (text: string, secrets: SecretSpellings) => string,
): string | undefined {
  if (value.length < 8 || !BASE64.test(value)) return undefined;
  const bytes = Buffer.from(value, "base64").toString("latin1");
  const hidden = hide(bytes, byteSpellingsOf(secrets));
  return hidden === bytes ? undefined : Buffer.from(hidden, "latin1").toString("base64");
}
