import { dirname } from "node:path";
import { parseDocument, Scalar, type Document, type LineCounter } from "yaml";
import { ok, openConfigSecret, isSealedSecret, yamlErrorText, type Result } from "@acp/core";
import { writeFileAtomic } from "./atomic-write.js";
import { FileNotOwnedError, notOwnedMessage, trustFileOwners } from "./owner.js";
import { homePaths } from "./paths.js";
import { readFileUpTo } from "./read-up-to.js";
import { failWith, ioMessage } from "./result.js";

/** Largest `config.yml` we read (1 MiB). */
export const MAX_CONFIG_BYTES = 1024 * 1024;
/** A config key path: dotted lower-case identifiers (`telegram.bot_token`). */
export const CONFIG_PATH_PATTERN = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*$/;

/** Why a config file must be acp's user's own. */
const CONFIG_OWNER_WHY = "whoever owns a config file can name the policy and the commands acp runs";

/** Reads `config.yml` as a YAML document, comments and all (`config_malformed` when it does not parse). */
export function readConfigDocument(home: string): Result<Document> {
  return readConfigDocumentAt(homePaths(home).config, {
    name: "config.yml",
    missingHint: " (run `acp init`)",
    regularOnly: true,
  });
}

/**
 * Reads a config file as a YAML document (comments kept): at most {@link MAX_CONFIG_BYTES}, unique keys,
 * the first YAML error as `NAME:LINE:COL: message` (`config_malformed`); `config_missing` when there is no
 * file, `config_unreadable` when it cannot be read (a directory: `PATH: is a directory, not a config file`),
 * `config_not_owned` when another user owns it than {@link trustFileOwners} of its folder allows (checked on
 * the open file before a byte is read: whoever owns a config file can name the policy and the commands acp
 * runs). `name` is what messages call the file (default its path);
 * `lineCounter` (yaml's) is filled for locating nodes later.
 */
export function readConfigDocumentAt(
  path: string,
  options: {
    readonly name?: string;
    readonly missingHint?: string;
    readonly lineCounter?: LineCounter;
    /** Refuse a pipe or a device (the home's own file; a file a person names may be a pipe). */
    readonly regularOnly?: boolean;
  } = {},
): Result<Document> {
  let text: string;
  try {
    const owners = trustFileOwners(dirname(path));
    const buf = readFileUpTo(path, MAX_CONFIG_BYTES, {
      regularOnly: options.regularOnly === true,
      ...(owners !== undefined ? { owners } : {}),
    });
    if (buf === undefined) return failWith({ code: "config_malformed" }, `\`${path}\` is larger than 1 MiB`);
    text = buf.toString("utf8");
  } catch (err) {
    if (err instanceof FileNotOwnedError)
      return failWith({ code: "config_not_owned" }, notOwnedMessage(err, CONFIG_OWNER_WHY));
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EISDIR") return failWith({ code: "config_unreadable" }, `${path}: is a directory, not a config file`);
    const missing = code === "ENOENT";
    return failWith(
      missing ? { code: "config_missing" } : { code: "config_unreadable" },
      `cannot read \`${path}\`: ${ioMessage(err)}${missing ? (options.missingHint ?? "") : ""}`,
    );
  }
  const doc = parseDocument(text, {
    uniqueKeys: true,
    ...(options.lineCounter !== undefined ? { lineCounter: options.lineCounter } : {}),
  });
  const error = doc.errors[0];
  if (error !== undefined)
    return failWith({ code: "config_malformed" }, yamlErrorText(options.name ?? path, error, undefined, text));
  return ok(doc);
}

/**
 * Sets a value at a dotted path of a config document, keeping every comment, and writes `config.yml`
 * atomically (0600). A path through a non-map value is `config_path_invalid`.
 */
export function writeConfigValue(home: string, doc: Document, path: string, value: string): Result<void> {
  if (!CONFIG_PATH_PATTERN.test(path))
    return failWith(
      { code: "config_path_invalid" },
      `\`${path}\` is not a config key path (like \`telegram.bot_token\`)`,
    );
  try {
    const keys = path.split(".");
    const existing = doc.getIn(keys, true);
    if (existing instanceof Scalar) existing.value = value;
    else doc.setIn(keys, value);
  } catch {
    return failWith(
      { code: "config_path_invalid" },
      `\`${path}\` goes through a value that is not a map in config.yml`,
    );
  }
  try {
    writeFileAtomic(homePaths(home).config, doc.toString({ lineWidth: 0 }));
    return ok(undefined);
  } catch (err) {
    return failWith({ code: "config_write_failed" }, `cannot write config.yml: ${ioMessage(err)}`);
  }
}

/** `config_secret_plain` for the secret at `path` of `file`: what to run to seal it. */
function plainSecret<T>(path: string, file: string): Result<T> {
  // `acp config set-secret` seals into the home's config.yml; another file takes a copy of the sealed value
  const elsewhere = file === "config.yml" ? "" : `, then copy its \`encrypted:\` value from config.yml into ${file}`;
  return failWith(
    { code: "config_secret_plain" },
    `\`${path}\` in ${file} is not sealed (run \`acp config set-secret ${path}\`${elsewhere})`,
  );
}

/**
 * Whether the config secret at `path` may be read: sealed (`encrypted:<…>`), empty or missing is ok; a plain
 * (unsealed) value is `config_secret_plain`, as {@link readConfigSecret} says it. Needs no key, so a command
 * can refuse a plain secret when it starts, before the key is unlocked (`acp proxy` opens a channel's secret
 * only when a person is first asked). `file` is named in the message.
 */
export function checkConfigSecretSealed(doc: Document, path: string, file = "config.yml"): Result<void> {
  const value: unknown = doc.getIn(path.split("."));
  if (value === undefined || value === null || value === "" || isSealedSecret(value)) return ok(undefined);
  return plainSecret(path, file);
}

/**
 * The plain value of a config secret: an `encrypted:<…>` value at `path` is opened with the master seed;
 * an empty or missing value is undefined; a plain (unsealed) value is `config_secret_plain`. `file` is the
 * config file the document was read from, named in the messages (default `config.yml`, the home's).
 */
export function readConfigSecret(
  doc: Document,
  path: string,
  seed: Uint8Array,
  file = "config.yml",
): Result<string | undefined> {
  const value: unknown = doc.getIn(path.split("."));
  if (value === undefined || value === null || value === "") return ok(undefined);
  if (!isSealedSecret(value)) return plainSecret(path, file);
  const opened = openConfigSecret(value, path, seed);
  if (opened.ok || file === "config.yml") return opened;
  return { ok: false, issues: opened.issues.map((i) => ({ ...i, message: `${file}: ${i.message}` })) };
}
