/**
 * A file of ACP's home with another name (a hard link) elsewhere on the same file system. The sandbox covers
 * the home at its path, and the aliases the mount table shows (`home-aliases.ts`); a hard link is neither: a
 * second directory entry for the same inode, anywhere on the home's file system, which the agent (which sees
 * the whole host, read-only, and writes its working directory) reads — the vault, the keys, the state — and
 * writes when it lies in a writable path (the policy, the audit trail). Which directory holds the other name
 * cannot be known without searching the file system, so the home's files must have one name (`st_nlink` 1):
 * one with more is refused before the agent starts.
 */
import { lstatSync, readdirSync, statSync, type Stats } from "node:fs";
import { dirname, join } from "node:path";
import { SandboxError } from "./errors.js";

/** The files a home keeps at its top (secrets, state, and what decides), by name. */
export const HOME_LINK_CHECKED_FILES: readonly string[] = [
  "vault.json",
  "memory.key",
  "config.yml",
  "state.db",
  "state.db-wal",
  "state.db-shm",
  "policy.yml",
  "consent-graph.json",
  "consent-graph.reviews.json",
  "audit.jsonl",
  "pins.json",
  "serve.json",
];

/** The home's directories every regular file of which is checked (keys: the signing key; claim: its keys). */
export const HOME_LINK_CHECKED_DIRS: readonly string[] = ["keys", "claim"];

/** A file of the home with more than one name. */
export interface LinkedHomeFile {
  readonly path: string;
  readonly links: number;
}

/**
 * The home's files ({@link HOME_LINK_CHECKED_FILES}, and every regular file in {@link HOME_LINK_CHECKED_DIRS})
 * with more than one name; a missing one is fine (not created yet). Throws a `SandboxError`
 * (`sandbox_setup_failed`) when one cannot be examined (fail closed).
 */
export function linkedHomeFiles(home: string): LinkedHomeFile[] {
  const found: LinkedHomeFile[] = [];
  const check = (path: string, st: Stats | undefined): void => {
    if (st !== undefined && st.isFile() && st.nlink > 1) found.push({ path, links: st.nlink });
  };
  for (const name of HOME_LINK_CHECKED_FILES) check(join(home, name), look(join(home, name)));
  for (const dir of HOME_LINK_CHECKED_DIRS) {
    const path = join(home, dir);
    const st = look(path);
    if (st === undefined || !st.isDirectory()) continue;
    let names: string[];
    try {
      names = readdirSync(path);
    } catch (err) {
      throw cannotExamine(path, err);
    }
    for (const name of names.sort()) check(join(path, name), look(join(path, name)));
  }
  return found;
}

/**
 * A `SandboxError` (`sandbox_home_linked`) naming the first file of the home with another name, and how to
 * find that name; undefined when every file has one.
 */
export function homeFileLinked(home: string): SandboxError | undefined {
  const first = linkedHomeFiles(home)[0];
  if (first === undefined) return undefined;
  const others = first.links - 1;
  return new SandboxError({
    code: "sandbox_home_linked",
    message: `\`${first.path}\`, a file of ACP's home, has ${others} other name${others === 1 ? "" : "s"} (a hard link): the sandbox hides the home, not another name of the same file, so the agent could read it there (or change it, in its working directory or a --writable path)`,
    help: `find the other name with \`find ${fileSystemTop(first.path)} -xdev -samefile ${first.path}\` and remove it (\`rm\` of a name leaves the file), or keep a copy (\`cp\`) rather than a link`,
  });
}

/** `lstat` of `path`; undefined when it does not exist. */
function look(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw cannotExamine(path, err);
  }
}

function cannotExamine(path: string, err: unknown): SandboxError {
  const code = (err as NodeJS.ErrnoException).code ?? String(err);
  return new SandboxError({
    code: "sandbox_setup_failed",
    message: `sandbox setup failed: cannot examine \`${path}\` of ACP's home (${code}) to make sure it has no other name (a hard link) the agent could read`,
    help: "make the home readable to the user acp runs as",
  });
}

/** The top of the file system `path` is on: the highest directory above it on the same device (where a search for its other names starts). */
function fileSystemTop(path: string): string {
  let top = dirname(path);
  try {
    const dev = statSync(top).dev;
    for (let up = dirname(top); up !== top && statSync(up).dev === dev; up = dirname(up)) top = up;
  } catch {
    return "/";
  }
  return top;
}
