/**
 * `@acp/proxy/http-rules`: who may reach an HTTP listener of the proxy or the service (loopback, the agent
 * bearer token's name, when plain HTTP is refused) and what a public URL may be. Without the listeners
 * themselves, so a command that only checks a configuration does not load the MCP SDK.
 */
export { AGENT_TOKEN_NAME, isLoopbackAddress, isLoopbackHost } from "./downstream/bearer-auth.js";
export { refusesPlainHttp, servesPlainHttpBeyondLoopback, type PlainHttpListener } from "./downstream/plain-http.js";
export { parsePublicUrl, type PublicUrl } from "./downstream/public-url.js";
