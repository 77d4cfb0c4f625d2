export {
  AcpProxy,
  createProxy,
  newId,
  PROXY_SERVER_INFO,
  type AcpProxyOptions,
  type ProxySession,
} from "./acp-proxy.js";
export { createProgressRelay, type ProgressRelay } from "./progress-relay.js";
export { PendingObservations } from "./observations.js";
export { DownstreamTransport } from "./fast-path.js";
export type { CallContext } from "./tool-call-handler.js";
