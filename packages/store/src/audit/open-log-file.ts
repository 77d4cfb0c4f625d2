import { constants, statSync } from "node:fs";
import { open as openHandle, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { AuditLogError } from "./audit-log-error.js";

/** `a+` that does not follow a symbolic link at the log's name. */
const LOG_OPEN_FLAGS = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

/**
 * Opens the log for appending, creating it 0600: a symbolic link at its name is refused
 * (`audit_log_unsafe`), so someone who can write the home cannot send the log's appends into another file;
 * so is anything but a regular file (a named pipe planted there would hang the open).
 */
export async function openLogFile(path: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await openCreating(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ELOOP") throw err;
    throw new AuditLogError(
      { code: "audit_log_unsafe" },
      `\`${path}\` is a symbolic link: the audit log must be a file at that name (remove the link, or point the log's path at its target)`,
    );
  }
  // a named pipe opens at once for reading and writing, and reading its (absent) last line would wait for ever
  if (!(await handle.stat()).isFile()) {
    await handle.close();
    throw new AuditLogError(
      { code: "audit_log_unsafe" },
      `\`${path}\` is not a regular file (a pipe, a socket or a device): the audit log must be a file (remove it)`,
    );
  }
  return handle;
}

/**
 * Opens the log ({@link LOG_OPEN_FLAGS}), and when this call made it, as root, in a directory of another
 * user (`sudo -E acp run` with a person's home), gives it to that user: a log root kept (0600) could not be
 * opened by the person's own `acp proxy` afterwards (`EACCES`).
 */
async function openCreating(path: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await openHandle(path, LOG_OPEN_FLAGS | constants.O_EXCL, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return openHandle(path, LOG_OPEN_FLAGS, 0o600);
  }
  if (process.getuid?.() === 0) {
    const dir = statSync(dirname(path));
    if (dir.uid !== 0)
      await handle.chown(dir.uid, dir.gid).catch(async (err: unknown) => {
        await handle.close();
        throw err;
      });
  }
  return handle;
}
