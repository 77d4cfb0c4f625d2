import { existsSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_REDACTION, parseRedactionConfig, type RedactionRules } from "@acp/core";
import { readConfigFile, whereIn, type ConfigFile, type ConfigLocator } from "./config-file.js";
import { CliError, EXIT } from "../exit-codes.js";

/**
 * The `redaction:` section of `$ACP_HOME/config.yml` (extra key-name and value patterns, added to the
 * defaults unless `defaults: false`); the defaults without a config file. Invalid → exit 4 naming each problem
 * at its `FILE:LINE:COL`.
 * (`acp serve`; `acp proxy` checks the section of the config file in use with `redactionRulesFrom`.)
 */
export function loadRedactionRules(home: string): RedactionRules {
  const path = join(home, "config.yml");
  if (!existsSync(path)) return DEFAULT_REDACTION;
  let file: ConfigFile;
  try {
    file = readConfigFile(path, false);
  } catch {
    return DEFAULT_REDACTION; // a config that does not parse is reported by the command that reads it
  }
  return redactionRulesFrom(file.values["redaction"], path, (at) => whereIn(file, at));
}

/** Checks a `redaction:` section of the config file `file` (named in messages); absent: the defaults. Invalid → exit 4. */
export function redactionRulesFrom(section: unknown, file: string, locate?: ConfigLocator): RedactionRules {
  const rules = parseRedactionConfig(section);
  if (!rules.ok) {
    const at = (path: readonly (string | number)[]): string => locate?.(path) ?? file;
    throw new CliError(rules.issues.map((i) => `${at(i.path)}: ${i.message}`).join("\n"), EXIT.invalid);
  }
  return rules.value;
}
