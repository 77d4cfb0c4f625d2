import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { CliError, EXIT } from "../exit-codes.js";
import { readFailure } from "./read-input.js";

/** The first ancestor of `path` that exists and is not a directory (what stops a write there), if any. */
function blockingAncestor(path: string): string | undefined {
  const ancestors: string[] = [];
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) ancestors.unshift(dir);
  for (const dir of ancestors) {
    try {
      if (!statSync(dir).isDirectory()) return dir;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Why `path` could not be written, in words a person can act on. */
export function writeFailure(err: unknown, path: string): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case "ENOENT":
      return `no such directory (create \`${dirname(path)}\` first)`;
    case "ENOTDIR":
    case "EEXIST": {
      const blocker = blockingAncestor(path);
      return blocker !== undefined ? `\`${blocker}\` is not a directory` : "a part of the path is not a directory";
    }
    case "EISDIR":
      return "it is a directory";
    default:
      return readFailure(err);
  }
}

/**
 * Writes `text` to a file the person named (mode 0600 unless `mode` says otherwise), creating missing
 * directories only when `makeDirectories` is set; a failure is an I/O error (exit 1) naming the path and why.
 */
export function writeOutputFileSync(
  path: string,
  text: string,
  options: { readonly mode?: number; readonly makeDirectories?: boolean } = {},
): void {
  try {
    if (options.makeDirectories === true) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, text, { mode: options.mode ?? 0o600 });
  } catch (err) {
    throw new CliError(`cannot write \`${path}\`: ${writeFailure(err, path)}`, EXIT.error);
  }
}
