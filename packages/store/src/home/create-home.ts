import { chmodSync, closeSync, existsSync, lstatSync, mkdirSync, openSync, readSync, renameSync } from "node:fs";
import { ok, type PrivateKeyFileV1, type Result } from "@acp/core";
import { writeFileAtomic } from "./atomic-write.js";
import { homeInUseMessage, liveHomeWriters } from "./live-writers.js";
import { homePaths, HOME_DIR_MODE, type HomePaths } from "./paths.js";
import { failWith, ioMessage } from "./result.js";

/** What {@link createHome} writes. */
export interface CreateHomeInput {
  readonly privateKeyFile: PrivateKeyFileV1;
  readonly configText: string;
  readonly policyText: string;
  /** Overwrite config, policy and keys of an existing home. */
  readonly force: boolean;
  /**
   * Used to name a vault moved aside by `force` (`vault.json.replaced-<stamp>`) and an audit log the new key
   * cannot verify (`audit.jsonl.before-init-<stamp>`).
   */
  readonly stamp: string;
}

/** What {@link createHome} did. */
export interface CreatedHome {
  readonly paths: HomePaths;
  /** Files that existed and were replaced (`force`). */
  readonly replaced: readonly string[];
  /** Where an old vault was moved (it was sealed with the old key), if there was one. */
  readonly vaultMovedTo?: string;
  /**
   * Where an audit log signed with another key was moved (`audit.jsonl.before-init-<stamp>`, its anchor
   * beside it as `….checkpoint`), if there was one.
   */
  readonly auditMovedTo?: string;
}

/** A top-level `"event_type":"checkpoint"` member: only a checkpoint line holds it unescaped (scan-log.ts). */
const CHECKPOINT_MARKER = Buffer.from('"event_type":"checkpoint"');

/** Whether the regular file at `path` holds a checkpoint line; read in chunks, never whole. */
function holdsCheckpoint(path: string): boolean {
  const fd = openSync(path, "r");
  try {
    const chunk = Buffer.alloc(1024 * 1024);
    const keep = CHECKPOINT_MARKER.length - 1;
    let carry = Buffer.alloc(0);
    for (let offset = 0; ;) {
      const read = readSync(fd, chunk, 0, chunk.length, offset);
      if (read === 0) return false;
      offset += read;
      const data = Buffer.concat([carry, chunk.subarray(0, read)]);
      if (data.includes(CHECKPOINT_MARKER)) return true;
      carry = Buffer.from(data.subarray(Math.max(0, data.length - keep)));
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Moves the home's audit log aside when the new key cannot verify it: it holds a signed checkpoint, or has
 * an anchor (`audit.jsonl.checkpoint`), each signed with a key that is not the new one (an `acp proxy` run
 * before `acp init` signed with a key thrown away at exit; `--force` replaces the old home's key). Left
 * where it is, the next writer would extend it and `acp audit verify` would refuse it for good. The log
 * and its anchor move together (`audit.jsonl.before-init-<stamp>` and `….checkpoint`), never deleted. A
 * log with no checkpoint (nothing signed) stays. Not a regular file: left for `acp doctor` to report.
 */
function moveForeignAuditLog(audit: string, stamp: string): string | undefined {
  const anchor = `${audit}.checkpoint`;
  const log = lstatSync(audit, { throwIfNoEntry: false });
  const hasAnchor = lstatSync(anchor, { throwIfNoEntry: false }) !== undefined;
  if (log !== undefined && !log.isFile()) return undefined;
  if (!hasAnchor && (log === undefined || !holdsCheckpoint(audit))) return undefined;
  const to = `${audit}.before-init-${stamp}`;
  if (existsSync(to) || existsSync(`${to}.checkpoint`) || existsSync(`${to}.anchored`))
    throw new Error(`${to} already exists`);
  if (hasAnchor) renameSync(anchor, `${to}.checkpoint`);
  if (log !== undefined) renameSync(audit, to);
  // the marker that it had an anchor goes with it: left behind, it would make the new log's writer refuse
  if (lstatSync(`${audit}.anchored`, { throwIfNoEntry: false }) !== undefined)
    renameSync(`${audit}.anchored`, `${to}.anchored`);
  return to;
}

/**
 * Whether a directory holds an ACP home: a config, a policy, keys or a vault (what `acp init` writes, or a
 * person wrote by hand). A directory that merely exists is not a home: `acp proxy` run before `acp init`
 * creates it to keep `pins.json` there, and must not then take it for one (it would start a state.db and an
 * audit log there on the next start). Without one every command runs as before `acp init`; `acp init`
 * refuses to write over one without `--force`.
 */
export function isExistingHome(home: string): boolean {
  const p = homePaths(home);
  return [p.config, p.policy, p.privateKey, p.publicKey, p.vault].some((f) => existsSync(f));
}

/**
 * Creates `$ACP_HOME` (0700) with `keys/` (0700), `keys/private.key` and `keys/public.key`, `config.yml`
 * and `policy.yml` (0600), each written atomically. Refuses (`home_exists`) when the directory already
 * holds a home, unless `force`; with `force` an existing `vault.json` (sealed with the old key) is moved
 * aside, never deleted. An `audit.jsonl` signed with another key (a checkpoint or an anchor) is moved aside
 * with its anchor, never deleted (`auditMovedTo`): the new key could not verify it. `state.db` and
 * `pins.json` are left alone. Refuses (`home_in_use`) while a live process writes the home's audit log
 * ({@link liveHomeWriters}): it would keep signing with the old key, in a log moved from under it.
 */
export function createHome(home: string, input: CreateHomeInput): Result<CreatedHome> {
  const paths = homePaths(home);
  if (!input.force && isExistingHome(home)) {
    return failWith(
      { code: "home_exists" },
      `\`${home}\` already holds an acp home (use --force to replace its config, policy and keys)`,
    );
  }
  // a live writer would go on with the old key in memory, in a log moved from under it
  const writers = liveHomeWriters(home);
  if (writers.length > 0) return failWith({ code: "home_in_use" }, homeInUseMessage(home, writers));
  try {
    mkdirSync(home, { recursive: true, mode: HOME_DIR_MODE });
    chmodSync(home, HOME_DIR_MODE);
    mkdirSync(paths.keysDir, { recursive: true, mode: HOME_DIR_MODE });
    chmodSync(paths.keysDir, HOME_DIR_MODE);
    const replaced = [paths.config, paths.policy, paths.privateKey, paths.publicKey].filter((f) => existsSync(f));
    const auditMovedTo = moveForeignAuditLog(paths.audit, input.stamp);
    let vaultMovedTo: string | undefined;
    if (existsSync(paths.vault)) {
      vaultMovedTo = `${paths.vault}.replaced-${input.stamp}`;
      renameSync(paths.vault, vaultMovedTo);
    }
    writeFileAtomic(paths.privateKey, `${JSON.stringify(input.privateKeyFile, null, 2)}\n`);
    writeFileAtomic(paths.publicKey, `${input.privateKeyFile.public_key}\n`);
    writeFileAtomic(paths.config, input.configText);
    writeFileAtomic(paths.policy, input.policyText);
    return ok({
      paths,
      replaced,
      ...(vaultMovedTo === undefined ? {} : { vaultMovedTo }),
      ...(auditMovedTo === undefined ? {} : { auditMovedTo }),
    });
  } catch (err) {
    return failWith({ code: "home_write_failed" }, `cannot create \`${home}\`: ${ioMessage(err)}`);
  }
}
