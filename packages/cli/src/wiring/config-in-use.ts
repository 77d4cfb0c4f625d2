import { join } from "node:path";
import type { RedactionRules } from "@acp/core";
import { CliError, EXIT } from "../exit-codes.js";
import { credentialRulesFrom, type CredentialRule } from "./credentials.js";
import { redactionRulesFrom } from "./redaction-config.js";
import { checkSessionBlock } from "./session-config.js";
import { checkChannelKeys } from "./config-channels.js";
import { readConfigFile, type ConfigFile } from "./config-file.js";

/**
 * The config keys `acp proxy` (and `acp run`) take from the config file in use, each checked: the
 * `redaction:` patterns, the `credentials:` mapping, the `session:` block, and the consent channel
 * (`channel:`, `telegram:`, `webhook:`; its sealed secrets are opened on first use with the home's key).
 * Secret values stay in the home's vault and in the sealed values of this file.
 */
export interface ConfigInUse {
  readonly file: ConfigFile;
  readonly redaction: RedactionRules;
  readonly credentials: readonly CredentialRule[];
  /** The `session:` block as given (`{}`: the runtime's defaults). */
  readonly session: Readonly<Record<string, unknown>>;
}

/**
 * Checks every config key the proxy uses from one file. All problems are collected and reported together,
 * each naming the file (exit 4): a typo in a protection must never run silently without it.
 */
export function configInUse(file: ConfigFile): ConfigInUse {
  const problems: string[] = [];
  const checked = <T>(check: () => T, fallback: T): T => {
    try {
      return check();
    } catch (err) {
      if (!(err instanceof CliError) || err.exitCode !== EXIT.invalid) throw err;
      problems.push(err.message);
      return fallback;
    }
  };
  const v = file.values;
  const redaction = checked(() => redactionRulesFrom(v["redaction"], file.path), null);
  const credentials = checked(() => credentialRulesFrom(v["credentials"], file.path), []);
  const session = checked(() => checkSessionBlock(v["session"], file.path), {});
  checked(() => checkChannelKeys(v, file.path), undefined);
  if (problems.length > 0 || redaction === null) throw new CliError(problems.join("\n"), EXIT.invalid);
  return { file, redaction, credentials, session };
}

/** The home's `config.yml` (absent: an empty config), checked: what `acp proxy` uses without `--config`. */
export function homeConfigInUse(home: string): ConfigInUse {
  return configInUse(readConfigFile(join(home, "config.yml"), false));
}
