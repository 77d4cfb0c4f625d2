import { statSync } from "node:fs";

/**
 * Who may own a secret file of a home (`keys/private.key`, `keys/public.key`, `vault.json`) for acp to read
 * it, and who `acp doctor` accepts as the owner of the home's files: the user acp runs as. Root too reads
 * only its own files, with one exception: in a home another user owns (`sudo -E acp run` in a person's
 * home) that user's files as well, since whoever owns the home can replace any file in it already. Like
 * OpenSSH, which reads no `authorized_keys` owned by another user: whoever owns a key file can replace an
 * unencrypted key pair and sign approvals, or roll the vault back. `undefined` where there are no uids
 * (Windows): nothing is refused.
 */
export function allowedOwners(
  home: string,
  uid: number | undefined = process.getuid?.(),
): readonly number[] | undefined {
  if (uid === undefined) return undefined;
  if (uid !== 0) return [uid];
  const st = statSync(home, { throwIfNoEntry: false });
  return st === undefined || st.uid === 0 ? [0] : [0, st.uid];
}

/**
 * Who may own a home's other trust files for acp to read them: the audit anchors (`audit.jsonl.checkpoint`,
 * `audit-postgres-*.checkpoint`, `*.database`: whoever can replace one can hide a cut of the log) and a config
 * file (`config.yml` holds sealed secrets and names the policy and the upstream commands run). The
 * {@link allowedOwners} of the folder that holds the file, and root (who can replace any file already, and
 * may own a config under `/etc` that a service user reads). `undefined` where there are no uids.
 */
export function trustFileOwners(
  dir: string,
  uid: number | undefined = process.getuid?.(),
): readonly number[] | undefined {
  const owners = allowedOwners(dir, uid);
  return owners === undefined || owners.includes(0) ? owners : [...owners, 0];
}

/** Thrown by `readFileUpTo` with `owners` for a file owned by none of them. */
export class FileNotOwnedError extends Error {
  readonly code = "ENOTOWNED";
  constructor(
    readonly path: string,
    /** The file's owner. */
    readonly owner: number,
    /** The user acp runs as. */
    readonly uid: number,
  ) {
    super(`\`${path}\` is owned by uid ${owner}, not by uid ${uid} that acp runs as`);
    this.name = "FileNotOwnedError";
  }
}

/** The advice for a {@link FileNotOwnedError}: why the file must be acp's user's own, and the `chown` that does it. */
export function notOwnedMessage(err: FileNotOwnedError, why: string): string {
  return `${err.message}: ${why}; check it, then run \`chown ${err.uid} ${err.path}\``;
}
