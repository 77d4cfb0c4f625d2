import { readFileSync } from "node:fs";
import { CliError, EXIT } from "./exit-codes.js";

/** Why a file could not be read, in words (the error code when there is no better word). */
export function readFailure(err: unknown): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case "ENOENT":
      return "no such file";
    case "EISDIR":
      return "not a file";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    default:
      return err instanceof Error ? err.message : String(err);
  }
}

/** A file's text; a file that cannot be read is an I/O error (exit 1) naming `what` and the path. */
export function readTextFile(path: string, what: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new CliError(`cannot read ${what} \`${path}\`: ${readFailure(err)}`, EXIT.error);
  }
}
