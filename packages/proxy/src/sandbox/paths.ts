import { realpathSync } from "node:fs";
import { sep } from "node:path";

/** Whether `path` is `root` or lies under it (both already resolved). */
export function isWithin(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** `path` with every symbolic link resolved, or null when it cannot be (it does not exist, no permission). */
export function realPathOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}
