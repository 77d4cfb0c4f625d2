export { parseProxyConfig, PROXY_DEFAULTS, PROXY_KEYS, type ProxyConfig, type PrefixMode } from "./proxy-config.js";
