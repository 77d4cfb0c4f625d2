import { readFileSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { CliError, EXIT } from "../exit-codes.js";

/** Largest file a command reads; bigger ones are refused before reading. */
export const MAX_INPUT_BYTES = 16 * 1024 * 1024;

/**
 * Reads a text file the person named, with a clear error when it is missing, unreadable or absurd. A file that
 * cannot be read is said one way by every command (`cannot read WHAT \`PATH\`: no such file`, `readFailure`).
 */
export async function readInputFile(path: string, what: string, maxBytes = MAX_INPUT_BYTES): Promise<string> {
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new CliError(`${what} \`${path}\` is not a file`, EXIT.error);
    size = info.size;
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read ${what} \`${path}\`: ${readFailure(err)}`, EXIT.error);
  }
  if (size > maxBytes) {
    throw new CliError(`${what} \`${path}\` is ${size} bytes, more than the ${maxBytes}-byte limit`, EXIT.invalid);
  }
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    throw new CliError(`cannot read ${what} \`${path}\`: ${readFailure(err)}`, EXIT.error);
  }
}

/** Why a file could not be read, in words (the error code or message when there is no better word). */
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
      return (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
  }
}

/**
 * A file's text, read at once (for code that cannot wait: the policy and graph a pipeline is built from);
 * a file that cannot be read is an I/O error (exit 1) naming `what` and the path.
 */
export function readInputFileSync(path: string, what: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new CliError(`cannot read ${what} \`${path}\`: ${readFailure(err)}`, EXIT.error);
  }
}

/** Parses JSON the person typed on the command line, naming the option when it is malformed. */
export function parseJsonOption(text: string, option: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new CliError(`${option}: malformed JSON: ${reason}`, EXIT.invalid);
  }
}
