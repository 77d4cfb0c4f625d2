/** Finds a command the way a shell would: a path with a slash as is, a bare name on PATH. */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";

/** The executable file `command` names, or null. */
export function findExecutable(command: string, path: string | undefined, cwd: string): string | null {
  const candidates = command.includes("/")
    ? [isAbsolute(command) ? command : resolve(cwd, command)]
    : (path ?? "")
        .split(delimiter)
        .filter((dir) => dir !== "")
        .map((dir) => join(dir, command));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not this one
    }
  }
  return null;
}

/**
 * The system's own directories, searched before PATH for the tools the sandbox runs with privileges
 * (`unshare`, `setpriv`, and inside the init `mount` and `ip`): a directory on PATH may be one the agent can
 * write (a project's `bin/` put there by direnv, `./node_modules/.bin`), and an `unshare` it left there would
 * run as the user (root, for `netns`) outside any sandbox on the next `acp run`.
 */
export const SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin";

/** A privileged tool: looked up in `SYSTEM_PATH` first, then on `path`. */
export function findTool(name: string, path: string | undefined): string | null {
  return findExecutable(name, path !== undefined && path !== "" ? `${SYSTEM_PATH}:${path}` : SYSTEM_PATH, "/");
}
