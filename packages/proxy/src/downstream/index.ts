export { serveStdio } from "./stdio.js";
export {
  listenHttp,
  HttpListenError,
  plainHttpRefusal,
  DEFAULT_IDLE_SESSION_MS,
  DEFAULT_MAX_SESSIONS,
  type HttpListenOptions,
  type HttpListener,
} from "./http-listen.js";
export {
  AGENT_TOKEN_NAME,
  checkBearer,
  createBearerIdentity,
  isLocalOrigin,
  isLoopbackAddress,
  isLoopbackHost,
  type BearerCheck,
  type BearerIdentity,
} from "./bearer-auth.js";
export { parsePublicUrl, type PublicUrl } from "./public-url.js";
export { refusesPlainHttp, servesPlainHttpBeyondLoopback, type PlainHttpListener } from "./plain-http.js";
export { usePlainReadBuffer, unreadableAnswer } from "../transport/plain-read-buffer.js";
export {
  guardConnections,
  DEFAULT_MAX_UNREAD_BYTES,
  DEFAULT_STALLED_MS,
  type ConnectionGuardOptions,
} from "./connection-guard.js";
export { capConnections } from "./connection-guard.js";
