export {
  AcpProxy,
  createProxy,
  newId,
  PROXY_SERVER_INFO,
  type AcpProxyOptions,
  type ProxySession,
} from "./acp-proxy.js";
export { createProgressRelay, type ProgressRelay } from "./progress-relay.js";
