export { parseProxyConfig, PROXY_DEFAULTS, type ProxyConfig, type PrefixMode } from "./proxy-config.js";
