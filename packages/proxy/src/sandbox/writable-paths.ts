/**
 * The paths an agent may change besides its working directory (`acp run --writable PATH`): the rest of the
 * host is read-only inside the sandbox. Each must exist, must not be `/` (that would leave the whole host
 * writable) nor a shared directory the sandbox covers (`/tmp`, `/run`, `/var/tmp`, `/dev/shm`) nor lie in `/run`,
 * must not lie inside ACP's home (the policy, audit trail, keys and vault: an agent that can change them
 * decides its own approvals), and, under `/tmp`, `/var/tmp` or `/dev/shm`, must hold no way out of the sandbox
 * (a Unix socket, a FIFO, a device node or a socket directory such as `/tmp/tmux-0`: `findHostChannel`).
 */
import { realpathSync } from "node:fs";
import { coveredRootAbove, coveredRootAt, isInRuntimeDir } from "./covered-roots.js";
import { findHostChannel } from "./host-sockets.js";
import { findHomeAliases, isInHome } from "./home-aliases.js";
import { isWithin } from "./paths.js";

/** Why one `--writable` path is refused. */
export interface WritablePathIssue {
  readonly path: string;
  readonly message: string;
  readonly help: string;
}

/** The real paths, or every path refused and why. */
export type WritablePathsResult =
  | { readonly ok: true; readonly paths: readonly string[] }
  | { readonly ok: false; readonly issues: readonly WritablePathIssue[] };

/** Checks absolute `paths` against ACP's `home`; resolves symbolic links (the real path is what is bound). */
export function checkWritablePaths(paths: readonly string[], home: string): WritablePathsResult {
  const realHome = realOrNull(home) ?? home;
  const aliases = findHomeAliases(realHome) ?? [];
  const issues: WritablePathIssue[] = [];
  const out: string[] = [];
  for (const path of paths) {
    const real = realOrNull(path);
    if (real === null) {
      issues.push({
        path,
        message: `--writable \`${path}\` does not exist`,
        help: "create it first, or check the spelling",
      });
    } else if (real === "/") {
      issues.push({
        path,
        message: `--writable \`${path}\` would leave the whole host writable to the agent`,
        help: "name only the directories the agent must change",
      });
    } else if (coveredRootAt(real) !== undefined) {
      issues.push({
        path,
        message: `--writable \`${path}\` is shared by every program on this host (their temporary files and sockets, which lead out of the sandbox); the agent gets an empty one of its own`,
        help: `name a directory of the agent's own instead, e.g. \`mkdir ${real}/agent-work\``,
      });
    } else if (isInRuntimeDir(real)) {
      issues.push({
        path,
        message: `--writable \`${path}\` lies in the host's runtime directory /run, whose sockets (a session's D-Bus, ssh-agent, the display) lead out of the sandbox`,
        help: "name a directory of the agent's own instead, e.g. `mkdir ~/.cache/my-agent`",
      });
    } else if (isInHome(real, realHome, aliases)) {
      const through = isWithin(real, realHome) ? "" : ` (reached at \`${real}\` through another mount)`;
      issues.push({
        path,
        message: `--writable \`${path}\` is inside ACP's home \`${realHome}\`${through}, which holds the policy, audit trail, keys and vault the agent must never change`,
        help: "give the agent a directory outside the home",
      });
    } else {
      const root = coveredRootAbove(real);
      const channel = root === undefined ? undefined : findHostChannel(real, root);
      if (channel !== undefined) {
        issues.push({
          path,
          message: `--writable \`${path}\` would be bound back from the host's shared \`${root ?? ""}\`, but \`${channel.path}\` ${channel.what}: a program outside the sandbox listens there, and the agent could reach it`,
          help: "give the agent a directory of its own outside /tmp, /var/tmp and /dev/shm (e.g. `mkdir ~/.cache/my-agent`), or remove what is named",
        });
      } else if (!out.includes(real)) out.push(real);
    }
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, paths: out };
}

function realOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}
