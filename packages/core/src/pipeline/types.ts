import type { Route } from "../route/index.js";
import type { Category, RiskLevel } from "../request/index.js";

/** Which part of the pipeline produced a reason. */
export type SourceName = "policy" | "graph" | "contract" | "session" | "pipeline";

/** One reason behind a route, kept whatever the final route is. */
export interface Reason {
  readonly source: SourceName;
  /** Stable snake_case code (`rule_matched`, `rate_limited`, `unclassified_action`, …). */
  readonly code: string;
  /** A sentence a person understands. */
  readonly message: string;
  /** The deciding rule id or graph coordinate, when there is one. */
  readonly rule?: string;
}

/** What one source says about a request. A source that is not configured says nothing (returns null). */
export interface SourceVerdict {
  readonly source: SourceName;
  readonly route: Route;
  readonly reasons: readonly Reason[];
  /** The deciding rule, when the source has rules. */
  readonly rule?: string;
}

/** The pipeline's answer. */
export interface Decision {
  readonly route: Route;
  /** The policy-rule vocabulary for the same route: accept→allow, ask/defer→ask, refuse→deny. */
  readonly action: "allow" | "ask" | "deny";
  /** The deciding rule of the strictest source (`source:rule`), or null. */
  readonly rule: string | null;
  readonly category: Category;
  readonly risk_level: RiskLevel;
  /** Every reason from every source, strictest first. */
  readonly reasons: readonly Reason[];
  /** Each source's own verdict. */
  readonly verdicts: readonly SourceVerdict[];
  /** For ask: seconds until the request auto-denies, from the deciding rule. */
  readonly timeout?: number;
  /** For ask: the level the deciding rule asks for. */
  readonly level?: RiskLevel;
  /**
   * The policy version this decision used (`sha256:` of the policy file's bytes), set by a front end that
   * reloads its policy (`acp proxy`, `acp serve`) so its audit names it; absent from the pipeline itself.
   */
  readonly policy_hash?: string;
}
