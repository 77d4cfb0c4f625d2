import { CliError, EXIT } from "../exit-codes.js";

/** The prefix of the claim provider's migration ids in `acp_migrations` (`claim/NNN-…`), SQLite and PostgreSQL alike. */
const CLAIM_PREFIX = "claim/";

/**
 * Stops (exit 1) unless the claim migrations recorded in `acp_migrations` (`applied`, every id there) are exactly
 * the ones this build ships (`expected`): a read-only operator command never migrates, so it reads only a schema
 * it knows. `where` names the database (a path, or a URL with its password masked). The message says which
 * version the database has (its last claim migration) and which this build expects, and what to do.
 */
export function assertClaimSchemaCurrent(
  where: string,
  applied: readonly string[],
  expected: readonly { readonly id: string }[],
): void {
  const known = expected.map((m) => m.id);
  const recorded = applied.filter((id) => id.startsWith(CLAIM_PREFIX));
  const wanted = known.at(-1) ?? "";
  const has = recorded.at(-1);
  if (has === undefined)
    throw new CliError(
      `\`${where}\`: no claim schema (no \`${CLAIM_PREFIX}…\` migration recorded): not a claim provider's state, or \`acp claim serve\` never ran on it`,
      EXIT.error,
    );
  const newer = recorded.filter((id) => !known.includes(id));
  if (newer.length > 0)
    throw new CliError(
      `\`${where}\`: claim schema is at \`${newer.at(-1) ?? has}\`, newer than this acp knows (\`${wanted}\`): read it with the acp of the provider's version (a read never migrates)`,
      EXIT.error,
    );
  const missing = known.filter((id) => !recorded.includes(id));
  if (missing.length > 0)
    throw new CliError(
      `\`${where}\`: claim schema is at \`${has}\` and this acp expects \`${wanted}\`: read it with the acp of the provider's version, or run \`acp claim serve\` of this version once to migrate it (a read never migrates)`,
      EXIT.error,
    );
}
