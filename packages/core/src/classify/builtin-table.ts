import { foldName, type Category, type RiskLevel } from "../request/index.js";

/** One row of the built-in classification table (consent protocol §5.5). */
export interface BuiltinClassification {
  /** Tool-name prefixes, as written in the spec without the trailing `*` (`read_`, `exec`). */
  readonly prefixes: readonly string[];
  readonly category: Category;
  readonly risk_level: RiskLevel;
}

/**
 * The built-in name table of the consent protocol §5.5, as data. A tool name matches a row when it starts
 * with one of the row's prefixes (case-sensitive, like every glob in ACP; other spellings of a name may
 * only make its row stricter: {@link findBuiltinClassification}). No two rows share a prefix that
 * could match the same name, so the order of the rows does not change the outcome.
 */
export const BUILTIN_CLASSIFICATIONS: readonly BuiltinClassification[] = [
  { prefixes: ["read_", "get_", "list_", "search_"], category: "read", risk_level: "low" },
  { prefixes: ["write_", "create_", "update_"], category: "write", risk_level: "medium" },
  { prefixes: ["send_", "email_", "message_"], category: "communication", risk_level: "high" },
  { prefixes: ["delete_", "remove_", "drop_"], category: "system", risk_level: "high" },
  { prefixes: ["deploy_", "exec", "shell_"], category: "system", risk_level: "high" },
  { prefixes: ["transfer_", "pay_", "charge_"], category: "financial", risk_level: "critical" },
  { prefixes: ["publish_", "post_", "tweet_"], category: "public", risk_level: "high" },
];

/**
 * What a tool name the table does not know is classified as: `write`/`medium`. Deliberately never `read`,
 * so an unknown tool cannot ride a rule written for reads; and not higher, so ordinary policies stay usable.
 */
export const DEFAULT_CLASSIFICATION: { readonly category: Category; readonly risk_level: RiskLevel } = {
  category: "write",
  risk_level: "medium",
};

/**
 * The risk a category implies when a source names the category but not the risk (the §5.5 defaults;
 * `physical`, absent from the table, is `high`).
 */
export const CATEGORY_DEFAULT_RISK: Readonly<Record<Category, RiskLevel>> = {
  read: "low",
  write: "medium",
  communication: "high",
  system: "high",
  financial: "critical",
  public: "high",
  physical: "high",
};

/** Prefixes ending in `_`, found with one map lookup; the others (`exec`) are tried one by one. */
const BY_UNDERSCORE_PREFIX = new Map<string, BuiltinClassification>();
const OTHER_PREFIXES: [string, BuiltinClassification][] = [];
for (const row of BUILTIN_CLASSIFICATIONS) {
  for (const prefix of row.prefixes) {
    if (prefix.indexOf("_") === prefix.length - 1) BY_UNDERSCORE_PREFIX.set(prefix, row);
    else OTHER_PREFIXES.push([prefix, row]);
  }
}

/** The row the name falls in as written (case-sensitive prefixes, as §5.5 writes them). */
function findRowAsWritten(tool: string): BuiltinClassification | undefined {
  const underscore = tool.indexOf("_");
  if (underscore > 0) {
    const row = BY_UNDERSCORE_PREFIX.get(tool.slice(0, underscore + 1));
    if (row !== undefined) return row;
  }
  for (const [prefix, row] of OTHER_PREFIXES) if (tool.startsWith(prefix)) return row;
  return undefined;
}

/** Every prefix folded ({@link foldName}: `message_` is `rnessage_`), for a folded spelling of a name. */
const FOLDED_PREFIXES: readonly (readonly [string, BuiltinClassification])[] = BUILTIN_CLASSIFICATIONS.flatMap((row) =>
  row.prefixes.map((prefix) => [foldName(prefix), row] as const),
);

/** The row a folded spelling of a name falls in. */
function findRowFolded(folded: string): BuiltinClassification | undefined {
  for (const [prefix, row] of FOLDED_PREFIXES) if (folded.startsWith(prefix)) return row;
  return undefined;
}

const RISK_ORDER = ["low", "medium", "high", "critical"] as const;

function riskOf(row: BuiltinClassification | undefined): number {
  return RISK_ORDER.indexOf(row?.risk_level ?? DEFAULT_CLASSIFICATION.risk_level);
}

/**
 * Already snake case with no namespace and nothing {@link foldName} reads otherwise (`0`, `1`, `m`): the
 * name is its own only spelling (the common case, one test).
 */
const SNAKE = /^[a-ln-z2-9_]*$/;

/**
 * The other spellings of a tool name the table is tried on: the name in snake case (`TransferFunds`,
 * `transferFunds`, `transfer-funds`, `TRANSFER_FUNDS` → `transfer_funds`) and each of its parts after a
 * namespace separator (`bank.transfer_funds`, `bank/transferFunds`, `bank__transfer_funds` →
 * `transfer_funds`).
 */
function otherSpellings(tool: string): string[] {
  const snake = tool
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .replace(/-/g, "_")
    .toLowerCase();
  const parts = snake.split(/[./]|__/).filter((part) => part.length > 0);
  return parts.length > 1 ? [snake, ...parts] : [snake];
}

/**
 * The built-in row a tool name falls in, or undefined when the table does not know the name. The name as
 * written decides (§5.5's prefixes are case-sensitive snake case); another spelling of it may make the
 * row stricter, never looser: when the name in snake case, or a part of it after a namespace (`.`, `/`,
 * `__`), falls in a row riskier than the name's own (or than the default for an unknown name), that row
 * is taken; so is the row of a spelling folded as a person reads it ({@link foldName}: NFKC, accents,
 * look-alike letters of other scripts). So `TransferFunds`, `bank.transfer_funds` and `trаnsfer_funds`
 * with a Cyrillic `а` are financial like `transfer_funds`, while `GetUser` stays unknown (write), not read.
 */
export function findBuiltinClassification(tool: string): BuiltinClassification | undefined {
  const row = findRowAsWritten(tool);
  if (SNAKE.test(tool) && !tool.includes("__")) return row;
  const known = spelledRows.get(tool);
  if (known !== undefined || spelledRows.has(tool)) return known;
  let found = row;
  for (const spelling of otherSpellings(tool)) {
    for (const other of [findRowAsWritten(spelling), findRowFolded(foldName(spelling))]) {
      if (other !== undefined && riskOf(other) > riskOf(found)) found = other;
    }
  }
  if (spelledRows.size >= MAX_SPELLED_ROWS) spelledRows.clear();
  spelledRows.set(tool, found);
  return found;
}

/**
 * The rows of names that needed their other spellings (`send_email` holds an `m`, which folds), by name:
 * agents call few distinct tools, so each is spelled once; cleared when it holds this many.
 */
const spelledRows = new Map<string, BuiltinClassification | undefined>();
const MAX_SPELLED_ROWS = 4096;
