import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { LineCounter, isNode, type Document } from "yaml";
import { suggest, yamlErrorText } from "@acp/core";
import { readConfigDocumentAt } from "@acp/store";
import { CliError, EXIT } from "../exit-codes.js";

/** A config file read once: where it is (named in every message) and its YAML document. */
export interface ConfigFile {
  /** The file's path; messages name it. */
  readonly path: string;
  /** The document (comments kept: sealed secrets are read from it); null when there is no file. */
  readonly document: Document | null;
  /** The document as plain values; `{}` without a file. */
  readonly values: Readonly<Record<string, unknown>>;
}

// where each document's lines start, for `whereIn` (kept out of ConfigFile: it stays plain data)
const lines = new WeakMap<Document, LineCounter>();

/**
 * Reads a config file with the store's `readConfigDocumentAt` (what `config.yml` is read with): at most 1 MiB, unique
 * keys, the first YAML error as `FILE:LINE:COL: message` (exit 4). A file that is not there is an empty
 * config unless `required` (`--config FILE`: exit 1 naming it; a directory: exit 1 naming the file to give).
 */
export function readConfigFile(path: string, required: boolean): ConfigFile {
  if (required && isDirectory(path))
    throw configDirectoryError(path, "config.yml", "`acp init` writes one: $ACP_HOME/config.yml");
  const lineCounter = new LineCounter();
  const read = readConfigDocumentAt(path, { lineCounter });
  if (!read.ok) {
    const issue = read.issues[0];
    if (issue?.code === "config_missing" && !required) return { path, document: null, values: {} };
    const unreadable =
      issue?.code === "config_missing" || issue?.code === "config_unreadable" || issue?.code === "config_not_owned";
    throw new CliError(read.issues.map((i) => i.message).join("; "), unreadable ? EXIT.error : EXIT.invalid);
  }
  const document = read.value;
  lines.set(document, lineCounter);
  let values: unknown;
  try {
    values = document.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (err) {
    throw new CliError(yamlErrorText(path, err), EXIT.invalid);
  }
  if (values === null || values === undefined) return { path, document, values: {} };
  if (typeof values !== "object" || Array.isArray(values)) {
    throw new CliError(`${path}: must be a mapping of settings (\`version\`, \`proxy\`, \`session\`, …)`, EXIT.invalid);
  }
  return { path, document, values: values as Record<string, unknown> };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * `--config DIR` (or a guard's `config`): says what to name instead (exit 1): the config file in DIR when there is one (`file`, relative
 * to DIR: `config.yml`, or `claim/config.yml` for a claim config), else `otherwise`; and `ACP_HOME=DIR` when DIR
 * is an ACP home.
 */
export function configDirectoryError(dir: string, file: string, otherwise: string): CliError {
  const inside = join(dir, file);
  const fix =
    existsSync(inside) && !isDirectory(inside)
      ? `name the file in it, \`${inside}\``
      : `name a YAML file (${otherwise})`;
  const home = isDirectory(join(dir, "keys")) ? `, or set ACP_HOME=${dir} to use that home` : "";
  return new CliError(`\`${dir}\` is a directory, not a config file: ${fix}${home}`, EXIT.error);
}

/** Where a path of a config file is, for messages: `FILE:LINE:COL`, or the file's path when unknown. */
export type ConfigLocator = (path: readonly (string | number)[]) => string;

/**
 * Where `path` (keys and list indexes, as in an issue's path) sits in the file: `FILE:LINE:COL` of the
 * deepest node on the path that the file has (an unknown key: its value; a missing key: the section that
 * lacks it); `FILE` alone when not even the first key is there.
 */
export function whereIn(file: ConfigFile, path: readonly (string | number)[]): string {
  const doc = file.document;
  const counter = doc === null ? undefined : lines.get(doc);
  if (doc === null || counter === undefined) return file.path;
  for (let n = path.length; n > 0; n--) {
    const node: unknown = doc.getIn(path.slice(0, n), true);
    if (!isNode(node) || node.range === undefined || node.range === null) continue;
    const { line, col } = counter.linePos(node.range[0]);
    return `${file.path}:${line}:${col}`;
  }
  return file.path;
}

/**
 * An unknown key at `path` of `file` (every section of a config file says it the one way): at `FILE:LINE:COL`,
 * named as written, with the closest of `known` (core's `suggest`, as policy.yml's unknown keys), else every
 * known one.
 */
export function unknownKeyProblem(file: ConfigFile, path: readonly string[], known: readonly string[]): string {
  const key = path[path.length - 1] ?? "";
  const prefix = path
    .slice(0, -1)
    .map((k) => `${k}.`)
    .join("");
  const shown = key.length > 64 ? `${key.slice(0, 64)}…` : key;
  const near = suggest(key, known);
  const help = near !== undefined ? `did you mean \`${prefix}${near}\`?` : `expected ${known.join(", ")}`;
  return `${whereIn(file, path)}: unknown key \`${prefix}${shown}\` (${help})`;
}
