import { existsSync } from "node:fs";
import { join } from "node:path";
import { isSealedSecret, openConfigSecret } from "@acp/core";
import { readVault } from "@acp/store";

/** The plain secret values a home holds, for hiding them (an agent's environment); why some could not be read. */
export interface HomeSecrets {
  readonly values: readonly string[];
  /** Set when the home's key, its vault or a sealed config value could not be opened: those values are missing. */
  readonly problem?: string;
}

/** Every `encrypted:` value in a parsed config file, with the dotted path it is sealed for. */
function sealedIn(value: unknown, path: readonly string[], out: { path: string; text: string }[]): void {
  if (isSealedSecret(value)) out.push({ path: path.join("."), text: value });
  else if (Array.isArray(value)) value.forEach((v, i) => sealedIn(v, [...path, String(i)], out));
  else if (typeof value === "object" && value !== null) {
    for (const [key, child] of Object.entries(value)) sealedIn(child, [...path, key], out);
  }
}

/**
 * The plain values of every vault entry and of every sealed value of `config` (a parsed config file), opened
 * with the home's master seed (`seed`: the wiring's, opened once for everything that needs it; not zeroed
 * here, its owner does). `acp run` removes any variable holding one of them from the agent's environment:
 * the sealed texts alone never match what a shell exported. A home without a key holds none; a key that does
 * not open is a `problem` (and no values), never an exception.
 */
export async function homeSecretValues(
  home: string,
  config: unknown,
  seed: () => Promise<Uint8Array>,
): Promise<HomeSecrets> {
  if (!existsSync(join(home, "keys", "private.key"))) return { values: [] };
  let master: Uint8Array;
  try {
    master = await seed();
  } catch (err) {
    return { values: [], problem: `the home's key did not open: ${err instanceof Error ? err.message : String(err)}` };
  }
  const values: string[] = [];
  const problems: string[] = [];
  const vault = readVault(home, master);
  if (vault.ok) values.push(...Object.values(vault.value));
  else problems.push(vault.issues[0]?.message ?? "the vault could not be opened");
  const sealed: { path: string; text: string }[] = [];
  sealedIn(config, [], sealed);
  for (const { path, text } of sealed) {
    const opened = openConfigSecret(text, path, master);
    if (opened.ok) values.push(opened.value);
    else problems.push(opened.issues[0]?.message ?? `\`${path}\` could not be opened`);
  }
  return problems.length === 0 ? { values } : { values, problem: problems.join("; ") };
}
