export {
  parseUpstreamArgument,
  parseUpstreamUrl,
  splitCommandLine,
  defaultUpstreamName,
  isUpstreamUrl,
  UPSTREAM_NAME,
  type UpstreamCredentials,
  type UpstreamSpec,
  type UpstreamTransportKind,
} from "./upstream-spec.js";
export {
  connectUpstream,
  scrubCredentials,
  PROXY_CLIENT_INFO,
  type UpstreamConnection,
  type UpstreamHooks,
} from "./connect-upstream.js";
export {
  UpstreamPool,
  messageOf,
  type Upstream,
  type UpstreamPoolEvents,
  type UpstreamRestart,
  type UpstreamStatus,
  type UpstreamTool,
} from "./upstream-pool.js";
export { UpstreamRelay, type AbortWatch, type RelayedRequest } from "./upstream-relay.js";
export { createAbortIsolatingFetch } from "./abort-isolating-fetch.js";
