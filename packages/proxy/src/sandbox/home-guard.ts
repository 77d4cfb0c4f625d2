/**
 * ACP's home kept where it is when it lies inside a path the agent may change (its working directory or a
 * `--writable` path). The home is covered with an empty, read-only mount, and a mount point cannot be
 * renamed or removed; but a directory between the writable path and the home can be: an agent working in
 * `/srv/project` with the home at `/srv/project/state/acp` could `mv state state.old`, the cover moving with
 * it, then create `state/acp/policy.yml` of its own, which every later `acp` would read as its policy (with
 * the agent's keys, vault and audit trail). So:
 *
 * - each directory strictly between a writable path and the home is bound onto itself inside the sandbox
 *   (`pinnedDirectories`): a mount point, it cannot be renamed or removed there (it stays writable);
 * - a symbolic link on the way to the home as ACP names it (`~/.acp` a link to elsewhere) that lies in a
 *   writable path is refused (`homeLinkWritable`): the agent could point it at a home of its own, and a link
 *   cannot be pinned.
 */
import { lstatSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { SandboxError } from "./errors.js";

/** Whether `path` is `root` or lies under it. */
function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * The directories strictly between each writable path that holds `home` (a real path) and `home`, outermost
 * first, without duplicates.
 */
export function pinnedDirectories(home: string, writable: readonly string[]): string[] {
  const out: string[] = [];
  for (const w of writable) {
    if (w === home || !within(home, w)) continue;
    const parts = relative(w, home).split(sep);
    for (let i = 1; i < parts.length; i++) out.push(join(w, ...parts.slice(0, i)));
  }
  return [...new Set(out)].sort((a, b) => a.split(sep).length - b.split(sep).length);
}

/**
 * The first symbolic link on the way to `given` (absolute, as a person or ACP names it) that lies in one of
 * the `writable` paths (real paths), and that path: the agent could point the link elsewhere. Undefined when
 * there is none (or `given` is relative).
 */
export function linkInWritable(
  given: string,
  writable: readonly string[],
): { readonly link: string; readonly holder: string } | undefined {
  if (!isAbsolute(given)) return undefined;
  const parts = given.split(sep).filter((p) => p !== "");
  for (let i = 1; i <= parts.length; i++) {
    const path = sep + parts.slice(0, i).join(sep);
    let link = false;
    try {
      link = lstatSync(path).isSymbolicLink();
    } catch {
      return undefined; // the rest does not exist: nothing to follow
    }
    if (!link) continue;
    let parent: string;
    try {
      parent = realpathSync(dirname(path));
    } catch {
      continue;
    }
    const holder = writable.find((w) => within(parent, w));
    if (holder !== undefined) return { link: path, holder };
  }
  return undefined;
}

/**
 * A `SandboxError` when the home as ACP names it (`given`, absolute) is reached through a symbolic link that
 * lies in one of the writable paths (real paths); undefined otherwise.
 */
export function homeLinkWritable(given: string, writable: readonly string[]): SandboxError | undefined {
  const found = linkInWritable(given, writable);
  if (found === undefined) return undefined;
  let target = given;
  try {
    target = realpathSync(given);
  } catch {
    // named as given
  }
  return new SandboxError({
    code: "sandbox_home_writable",
    message: `ACP's home \`${given}\` is reached through the symbolic link \`${found.link}\`, which lies in \`${found.holder}\`, writable to the agent: it could point the link at a home of its own (its own policy and keys), which acp would use from then on`,
    help: `set ACP_HOME to the home's real path \`${target}\`, or run the agent where it cannot change the link`,
  });
}
