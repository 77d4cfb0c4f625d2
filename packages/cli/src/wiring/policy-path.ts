import { accessSync, constants, existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import type { CliIo } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { readConfigFile, whereIn, type ConfigFile } from "./config-file.js";

/** What the resolution reads of a command's context: the environment (`HOME`) and the working directory. */
export type PathIo = Pick<CliIo, "env" | "cwd">;

/** Where the policy in use was named: `--policy FILE`, `defaults.policy` of the config file, or the home. */
export type PolicySource = "flag" | "config" | "home";

/** The policy file a command uses, and why. */
export interface PolicyChoice {
  /** The absolute path of the policy file. */
  readonly path: string;
  readonly source: PolicySource;
  /**
   * True only for the home's own `policy.yml` when it is missing: the one case a front end may fall back to
   * the built-in starter policy. A file `--policy` or `defaults.policy` names is never replaced.
   */
  readonly isDefault: boolean;
}

/**
 * `defaults.policy` of `file` as written (a non-empty string), or undefined when absent or null. Any other
 * value is exit 4 at `FILE:LINE:COL`: a policy the person named must never be silently ignored.
 */
export function configuredPolicy(file: ConfigFile): string | undefined {
  const defaults = file.values["defaults"];
  if (typeof defaults !== "object" || defaults === null || Array.isArray(defaults)) return undefined;
  const value = (defaults as Record<string, unknown>)["policy"];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string" && value.trim() !== "") return value;
  throw new CliError(
    `${whereIn(file, ["defaults", "policy"])}: \`defaults.policy\` must be the path of a policy file, not ${JSON.stringify(value) ?? typeof value}`,
    EXIT.invalid,
  );
}

/**
 * Expands `~` and `$HOME` (or `${HOME}`) at the start of a `defaults.policy` and resolves a relative one
 * against the home directory (a home copied elsewhere stays whole).
 */
export function expandConfiguredPolicy(io: PathIo, home: string, written: string): string {
  const userHome = io.env["HOME"] ?? homedir();
  let path = written;
  if (path === "~" || path.startsWith("~/")) path = join(userHome, path.slice(1));
  else if (path === "$HOME" || path.startsWith("$HOME/")) path = join(userHome, path.slice("$HOME".length));
  else if (path === "${HOME}" || path.startsWith("${HOME}/")) path = join(userHome, path.slice("${HOME}".length));
  return isAbsolute(path) ? path : resolve(home, path);
}

/**
 * The one resolution of the policy file every command uses: `--policy FILE` (against the working directory),
 * else `defaults.policy` of the config file in use (against the home), else `<home>/policy.yml`. A file that
 * `defaults.policy` names and that is missing, not a regular file or unreadable is exit 1 here, before
 * anything starts: never a fall-back to the built-in starter policy (a deny list the person expected must
 * not vanish). A bad `defaults.policy` value is exit 4.
 *
 * `config` is the config file in use (`--config FILE`, else the home's `config.yml`; a path is read, absent is
 * an empty config).
 */
export function resolvePolicyPath(
  io: PathIo,
  home: string,
  flag: string | undefined,
  config: ConfigFile | string,
): PolicyChoice {
  if (flag !== undefined) {
    // as every path typed on the command line (context's resolvePath): `~`, else from the working directory
    const userHome = io.env["HOME"] ?? homedir();
    const typed = flag === "~" || flag.startsWith("~/") ? join(userHome, flag.slice(1)) : resolve(io.cwd, flag);
    return { path: typed, source: "flag", isDefault: false };
  }
  const file = typeof config === "string" ? readConfigFile(config, false) : config;
  const written = configuredPolicy(file);
  if (written === undefined) {
    const path = join(home, "policy.yml");
    return { path, source: "home", isDefault: !existsSync(path) };
  }
  const path = expandConfiguredPolicy(io, home, written);
  const problem = unreadable(path);
  if (problem !== undefined) {
    throw new CliError(
      `cannot read policy \`${path}\` (defaults.policy in ${file.path}): ${problem} (fix defaults.policy, or pass --policy FILE)`,
      EXIT.error,
    );
  }
  return { path, source: "config", isDefault: false };
}

/** Why `path` cannot be read as a policy file, or undefined when it can. */
function unreadable(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return "not a regular file";
    accessSync(path, constants.R_OK);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return "no such file";
    if (code === "EACCES" || code === "EPERM") return "permission denied";
    return err instanceof Error ? err.message : String(err);
  }
}

/** How a choice is said (`acp doctor`): the file and why it is the one in use. */
export function describePolicyChoice(choice: PolicyChoice): string {
  const why =
    choice.source === "flag"
      ? "--policy"
      : choice.source === "config"
        ? "defaults.policy in config.yml"
        : "the home's policy.yml";
  return `${choice.path} (${why})`;
}
