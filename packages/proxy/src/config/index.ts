export {
  parseProxyConfig,
  PROXY_DEFAULTS,
  PROXY_KEYS,
  UPSTREAM_RESTART,
  type ProxyConfig,
  type PrefixMode,
} from "./proxy-config.js";
