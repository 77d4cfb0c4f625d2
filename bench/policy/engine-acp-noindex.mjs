// Baseline: ACP's compiled rules scanned linearly (no index).
import { build as buildAcp } from "./engine-acp.mjs";

export function build(policy) {
  return buildAcp(policy, { noIndex: true });
}
