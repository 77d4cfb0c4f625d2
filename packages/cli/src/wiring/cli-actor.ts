/** Who runs a CLI command that answers or changes something, as the audit and signed records name them. */
import { userInfo } from "node:os";

/**
 * `cli:NAME`: `$USER`, else `$LOGNAME`, else the account the process runs as (a cron job or a container
 * often sets neither variable), else `cli:unknown`.
 */
export function cliActor(env: Readonly<Record<string, string | undefined>>): string {
  return `cli:${env["USER"] || env["LOGNAME"] || accountName()}`;
}

function accountName(): string {
  try {
    return userInfo().username || "unknown";
  } catch {
    return "unknown";
  }
}
