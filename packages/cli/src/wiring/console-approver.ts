/** The name a console sign-in link carries: who the audit names as the approver of that session's answers. */
import { userInfo } from "node:os";
import { checkApproverName } from "@acp/server/state";
import { CliError, EXIT } from "../exit-codes.js";

/** The account running this command: `$USER`, else `$LOGNAME`, else the process's account; "" when none. */
function accountName(env: Readonly<Record<string, string | undefined>>): string {
  const fromEnv = env["USER"] || env["LOGNAME"];
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  try {
    return userInfo().username;
  } catch {
    return "";
  }
}

/** The chosen name, or what is wrong with the default one (the account name is not a valid approver name). */
export type ConsoleApprover = { readonly name: string } | { readonly unusableDefault: string };

/**
 * `flag` when given (an invalid one stops the command: exit 2, nothing written), else the account name
 * (`$USER`, `$LOGNAME`, the process's account) when it is a valid approver name.
 */
export function consoleApproverOf(
  flagName: string,
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): ConsoleApprover {
  if (flag !== undefined) {
    const problem = checkApproverName(flag);
    if (problem !== null) throw new CliError(`${flagName}: ${problem}`, EXIT.usage);
    return { name: flag };
  }
  const account = accountName(env);
  const problem = checkApproverName(account);
  return problem === null
    ? { name: account }
    : { unusableDefault: `the account name cannot name the approver (${problem}): pass ${flagName} NAME` };
}
