import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { formatIssue, validateGraphMapping, type GraphMapping, type GraphReviewRecord } from "@acp/core";
import { graphReviewsPath, readGraphReviews } from "@acp/store";
import { CliError, EXIT } from "../exit-codes.js";

/** What `config.yml` and the review record add to a consent graph: the mapping, the threshold, the reviews. */
export interface GraphSettings {
  readonly mapping?: GraphMapping;
  readonly threshold?: number;
  readonly reviews?: GraphReviewRecord;
}

const GRAPH_KEYS = ["mapping", "threshold"];

/**
 * Reads the `graph:` section of `$ACP_HOME/config.yml` (`mapping`: tool calls → `domain.action`;
 * `threshold`: VISIBLE from this confidence) and the home's review record. Invalid → exit 4, every problem
 * named; a missing config or section → the defaults.
 */
export function loadGraphSettings(home: string): GraphSettings {
  const file = join(home, "config.yml");
  const settings: { mapping?: GraphMapping; threshold?: number; reviews?: GraphReviewRecord } = {};
  const reviews = readGraphReviews(graphReviewsPath(home));
  if (reviews.ok) settings.reviews = reviews.value;
  if (!existsSync(file)) return settings;
  let config: unknown;
  try {
    config = parseYaml(readFileSync(file, "utf8"), { maxAliasCount: 100 }) as unknown;
  } catch (err) {
    throw new CliError(
      `${file}: not YAML: ${err instanceof Error ? (err.message.split("\n")[0] ?? "") : ""}`,
      EXIT.invalid,
    );
  }
  const section = (config as { graph?: unknown } | null)?.graph;
  if (section === undefined || section === null) return settings;
  if (typeof section !== "object" || Array.isArray(section)) {
    throw new CliError(`${file}: \`graph\` must be a mapping with \`mapping\` and \`threshold\``, EXIT.invalid);
  }
  const g = section as Record<string, unknown>;
  for (const key of Object.keys(g)) {
    if (!GRAPH_KEYS.includes(key))
      throw new CliError(`${file}: unknown key \`graph.${key}\` (expected mapping, threshold)`, EXIT.invalid);
  }
  if (g["mapping"] !== undefined) {
    const mapping = validateGraphMapping(g["mapping"]);
    if (!mapping.ok)
      throw new CliError(
        `invalid graph mapping:\n${mapping.issues.map((i) => formatIssue(i, file)).join("\n")}`,
        EXIT.invalid,
      );
    settings.mapping = mapping.value;
  }
  const threshold = g["threshold"];
  if (threshold !== undefined) {
    if (typeof threshold !== "number" || !(threshold >= 0 && threshold <= 1)) {
      throw new CliError(`${file}: \`graph.threshold\` must be a number from 0 to 1`, EXIT.invalid);
    }
    settings.threshold = threshold;
  }
  return settings;
}

/** The graph source options for these settings (mapping, and the context without the clock). */
export function graphSourceOptions(settings: GraphSettings): {
  mapping?: GraphMapping;
  context: { threshold?: number; reviews?: GraphReviewRecord };
} {
  return {
    ...(settings.mapping !== undefined ? { mapping: settings.mapping } : {}),
    context: {
      ...(settings.threshold !== undefined ? { threshold: settings.threshold } : {}),
      ...(settings.reviews !== undefined ? { reviews: settings.reviews } : {}),
    },
  };
}
