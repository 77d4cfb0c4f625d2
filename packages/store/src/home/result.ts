import { fail, type Issue, type Result } from "@acp/core";

/** A failed result with one issue. */
export function failWith<T>({ code }: { code: string }, message: string, path: Issue["path"] = []): Result<T> {
  return fail([{ code, path, message }]);
}

/** The message of an I/O error, lower-cased without a final period. */
export function ioMessage(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e.code === "ENOENT") return "no such file";
  if (e.code === "EACCES" || e.code === "EPERM") return "permission denied";
  const m = err instanceof Error ? err.message : String(err);
  return m.replace(/\.$/, "");
}
