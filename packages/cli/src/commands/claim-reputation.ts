import { isIP } from "node:net";
import type { Command } from "commander";
import { coarseSource, rangeKey, ReputationPolicy } from "@acp/claim";
import { printJson, printLine, resolveHome, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { loadClaimConfig } from "./claim-config.js";
import { withClaimStore } from "./claim-store-open.js";

interface ReputationFlags {
  db?: string;
  storageUrl?: string;
  config?: string;
  reset?: boolean;
  json?: boolean;
}

/**
 * The reputation key an operator names: an address (its /24 or /48), a /24 or /48 however it is written, the same
 * after `range:`, or `subject:{kid}:{agent}`. Anything else is a usage error: a range the provider never charges
 * (a /16, a /64, `range:2001:db8::/48` compressed as the provider never writes it) would read as a clean score 0,
 * and reset nothing.
 */
function keyOf(source: string): string {
  if (/^subject:[A-Za-z0-9_.:-]{1,128}:[\x21-\x7e]{1,200}$/.test(source)) return source;
  const range = source.startsWith("range:") ? source.slice("range:".length) : source;
  if (isIP(range) !== 0) return rangeKey(coarseSource(range));
  const [base = "", bits, ...rest] = range.split("/");
  // A /24 or /48 as the provider writes it, however it is typed (`2001:db8::/48` is `2001:db8:0::/48`).
  if (rest.length === 0 && ((bits === "24" && isIP(base) === 4) || (bits === "48" && isIP(base) === 6)))
    return rangeKey(coarseSource(base));
  throw new CliError(
    `\`${source}\` is not an address, a /24 or /48 range (203.0.113.0/24, 2001:db8::/48; the provider keys no other), range:… or subject:{kid}:{agent}`,
    EXIT.usage,
  );
}

/** Registers `acp claim reputation`: read or reset persistent reputation scores (§11.2). */
export function registerClaimReputation(claim: Command, ctx: CliContext): void {
  claim
    .command("reputation <source...>")
    .description("as the operator: show (or --reset) the persistent reputation of addresses, ranges or agents")
    .option("--reset", "forget these scores (a false positive; the source is admitted at once)")
    .option("--db <file>", "SQLite state database of the provider (default $ACP_HOME/state.db)")
    .option("--storage-url <url>", "PostgreSQL of the provider (default ACP_STORAGE_URL or storage.url in config.yml)")
    .option("--config <file>", "claim config, for the reputation settings (default $ACP_HOME/claim/config.yml)")
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  acp claim reputation 203.0.113.7                 # its /24: score, extra bits, how long it is refused\n  acp claim reputation subject:3q2…:agent-42 --reset\n\nRun it with the provider's $ACP_HOME (or --db / --storage-url). It creates nothing: without the provider's state it\nstops (exit 1) naming what is missing.\n\nShowing scores only reads: SQLite is opened read-only and PostgreSQL sees no DDL, so the claim schema is never\nmigrated; a database whose claim schema is older or newer than this acp's stops it (exit 1, both versions named):\nuse the acp of the provider's version, or run acp claim serve of this version once to migrate it. --reset writes,\nand first applies the claim migrations as acp claim serve does (a database an older provider made is migrated).\n\nExit codes: 0 shown (or reset), 1 no provider state (named), a claim schema this acp does not read (older or\nnewer, named), or the claim config or the database cannot be read, 2 usage (a SOURCE that is none of these, --db\nwith a PostgreSQL URL), 4 an invalid claim config.\n",
    )
    .action(async (sources: string[], flags: ReputationFlags) => {
      const keys = sources.map(keyOf);
      const home = resolveHome(ctx.io);
      const rep = new ReputationPolicy(loadClaimConfig(ctx, home, flags).reputation);
      const now = ctx.io.now().getTime();
      if (flags.reset === true) {
        const removed = await withClaimStore(ctx, home, flags, { key: "none", access: "write" }, (store) =>
          store.resetReputation(keys),
        );
        if (flags.json === true) printJson(ctx, { reset: keys, removed });
        else printLine(ctx, `reset ${keys.join(", ")} (${removed} score${removed === 1 ? "" : "s"} removed)`);
        return;
      }
      const scores = await withClaimStore(ctx, home, flags, { key: "none", access: "read" }, (store) =>
        store.reputation(keys, rep.halfLifeMs, now),
      );
      const rows = keys.map((key, i) => {
        const score = scores[i] ?? 0;
        return {
          key,
          score: Math.round(score * 100) / 100,
          extra_bits: rep.extraBits(score),
          refused_for_seconds: Math.ceil(rep.refusedForMs(score) / 1000),
        };
      });
      if (flags.json === true) printJson(ctx, { sources: rows });
      else
        for (const r of rows)
          printLine(
            ctx,
            `${r.key}: score ${r.score}, +${r.extra_bits} bit${r.extra_bits === 1 ? "" : "s"}${r.refused_for_seconds > 0 ? `, refused for ${r.refused_for_seconds} s` : ""}`,
          );
    });
}
