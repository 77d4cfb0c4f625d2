export { serveStdio } from "./stdio.js";
export { listenHttp, HttpListenError, type HttpListenOptions, type HttpListener } from "./http-listener.js";
export { checkBearer, isLoopbackAddress, isLoopbackHost, type BearerCheck } from "./bearer-auth.js";
