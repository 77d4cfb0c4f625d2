import { join } from "node:path";
import { validateGraphMapping, type GraphMapping, type GraphReviewRecord } from "@acp/core";
import { graphReviewsPath, readGraphReviews } from "@acp/store";
import { CliError, EXIT } from "../exit-codes.js";
import { readConfigFile, unknownKeyProblem, whereIn, type ConfigFile } from "../wiring/config-file.js";

/** The `graph:` section of a config file: how tool calls map into the consent graph, and the threshold. */
export interface GraphConfig {
  readonly mapping?: GraphMapping;
  readonly threshold?: number;
}

/** What the config file and the review record add to a consent graph: the mapping, the threshold, the reviews. */
export interface GraphSettings extends GraphConfig {
  readonly reviews?: GraphReviewRecord;
  /**
   * The mapping reviews are bound to when it is not `mapping` (`acp serve` judges a caller's own word on its
   * `server` under readings whose mapping is part of the configured one; a review is of the configured one).
   */
  readonly reviewedMapping?: GraphMapping;
  /**
   * Trusted-channel keys, key id → secret (`acp serve`: `serve.trusted_channel_keys`, each sealed): an
   * attestation made with one lets a `trusted_channel_required` action through. Absent: none verifies.
   */
  readonly trustedChannelKeys?: Readonly<Record<string, string>>;
}

const GRAPH_KEYS = ["mapping", "threshold"];

/**
 * Checks the `graph:` section of a config file (`mapping`: tool calls → `domain.action`; `threshold`:
 * VISIBLE from this confidence). Absent: `{}` (every call left to the other sources, the default
 * threshold). Every problem is named at `FILE:LINE:COL` and they are thrown together (exit 4).
 */
export function graphConfigFrom(file: ConfigFile): GraphConfig {
  const section = file.values["graph"];
  if (section === undefined || section === null) return {};
  if (typeof section !== "object" || Array.isArray(section)) {
    throw new CliError(
      `${whereIn(file, ["graph"])}: \`graph\` must be a mapping with \`mapping\` and \`threshold\``,
      EXIT.invalid,
    );
  }
  const g = section as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(g)) {
    if (!GRAPH_KEYS.includes(key)) problems.push(unknownKeyProblem(file, ["graph", key], GRAPH_KEYS));
  }
  const settings: { mapping?: GraphMapping; threshold?: number } = {};
  if (g["mapping"] !== undefined) {
    const mapping = validateGraphMapping(g["mapping"]);
    if (mapping.ok) settings.mapping = mapping.value;
    else for (const i of mapping.issues) problems.push(`${whereIn(file, i.path)}: ${i.message}`);
  }
  const threshold = g["threshold"];
  if (threshold !== undefined) {
    if (typeof threshold !== "number" || !(threshold >= 0 && threshold <= 1)) {
      problems.push(`${whereIn(file, ["graph", "threshold"])}: \`graph.threshold\` must be a number from 0 to 1`);
    } else settings.threshold = threshold;
  }
  if (problems.length > 0) throw new CliError(problems.join("\n"), EXIT.invalid);
  return settings;
}

/** The home's review record of its consent graph (absent or unreadable: none). */
export function graphReviews(home: string): { reviews?: GraphReviewRecord } {
  const reviews = readGraphReviews(graphReviewsPath(home));
  return reviews.ok ? { reviews: reviews.value } : {};
}

/**
 * The graph settings of a config file (`configFile`, required to exist; default `$ACP_HOME/config.yml`, absent:
 * the defaults) and the home's review record, for the commands that judge against the home (`acp policy
 * simulate`, `acp policy test --config`, `acp serve`). Invalid → exit 4, every problem named. (`acp proxy` and
 * `acp run` take `graph:` from the config file in use the same way.)
 */
export function loadGraphSettings(home: string, configFile?: string | ConfigFile): GraphSettings {
  const file =
    typeof configFile === "object"
      ? configFile
      : configFile !== undefined
        ? readConfigFile(configFile, true)
        : readConfigFile(join(home, "config.yml"), false);
  return { ...graphReviews(home), ...graphConfigFrom(file) };
}
/**
 * The graph mapping of a config file (`configFile`, required to exist; default `$ACP_HOME/config.yml`, absent:
 * none), for the commands that record or show reviews (a review is bound to the mapping in use). Invalid →
 * exit 4, every problem named.
 */
export function loadGraphMapping(home: string, configFile?: string): GraphMapping | undefined {
  const file =
    configFile !== undefined ? readConfigFile(configFile, true) : readConfigFile(join(home, "config.yml"), false);
  return graphConfigFrom(file).mapping;
}

/** The graph source options for these settings (mapping, and the context without the clock). */
export function graphSourceOptions(settings: GraphSettings): {
  mapping?: GraphMapping;
  context: {
    threshold?: number;
    reviews?: GraphReviewRecord;
    reviewedMapping?: GraphMapping;
    trustedChannelKeys?: Readonly<Record<string, string>>;
  };
} {
  const reviewedMapping = settings.reviewedMapping ?? settings.mapping;
  return {
    ...(settings.mapping !== undefined ? { mapping: settings.mapping } : {}),
    context: {
      ...(settings.threshold !== undefined ? { threshold: settings.threshold } : {}),
      ...(settings.reviews !== undefined ? { reviews: settings.reviews } : {}),
      ...(reviewedMapping !== undefined ? { reviewedMapping } : {}),
      ...(settings.trustedChannelKeys !== undefined ? { trustedChannelKeys: settings.trustedChannelKeys } : {}),
    },
  };
}
