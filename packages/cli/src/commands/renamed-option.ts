import { Option } from "commander";
import { printError, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/**
 * An option under the name it had before a rename: still accepted, left out of `--help`. `--session` meant
 * three things (approve's scope, intent set's session id, replay's and policy verify's settings file); each
 * now has a name that says which, and the old spelling, published in earlier docs, keeps working with a
 * warning until it is removed.
 */
export function oldNameOption(flags: string): Option {
  return new Option(flags).hideHelp();
}

/**
 * The value of a renamed option: `current` (the new name's), else `old` with a warning on stderr naming the
 * new spelling. Both at once is a usage error (exit 2).
 */
export function renamedValue<T>(
  ctx: CliContext,
  names: { readonly old: string; readonly current: string },
  old: T | undefined,
  current: T | undefined,
): T | undefined {
  if (old === undefined) return current;
  if (current !== undefined)
    throw new CliError(`give ${names.current} once (${names.old} is its old name, deprecated)`, EXIT.usage);
  printError(
    ctx,
    `acp: warning: ${names.old} is deprecated here and will be removed: say ${names.current} (the same meaning)`,
  );
  return old;
}
