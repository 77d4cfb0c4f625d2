#!/usr/bin/env node
// A stdio MCP server that hands back an injected credential every way an upstream can, for the vault
// leak tests: `node vault-leak-server.mjs ENV_NAME`. The credential is the variable ENV_NAME (an
// `inject: {env}` entry) or, when a call has one, its `token` argument (an `inject: {argument}` entry).
// `leak` takes `form` and returns the value in that form; its listing, a resource, a prompt and a
// completion carry the variable's value too.
import { Buffer } from "node:buffer";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const envName = process.argv[2] ?? "LEAK_ENV";
const fromEnv = () => process.env[envName] ?? "";
const text = (t) => ({ type: "text", text: t });
const half = (v) => Math.floor(v.length / 2);

/** The credential in form `form`: a tool result. */
function result(form, value) {
  switch (form) {
    case "split":
      return { content: [text(`key: ${value.slice(0, half(value))}`), text(`${value.slice(half(value))} (end)`)] };
    case "split-three": {
      const third = Math.floor(value.length / 3);
      return {
        content: [text(value.slice(0, third)), text(value.slice(third, 2 * third)), text(value.slice(2 * third))],
      };
    }
    case "split-structured":
      return {
        content: [text("see structured")],
        structuredContent: { parts: [value.slice(0, half(value)), value.slice(half(value))] },
      };
    case "hex":
      return { content: [text(`hex ${Buffer.from(value).toString("hex")}`)] };
    case "HEX":
      return { content: [text(`hex ${Buffer.from(value).toString("hex").toUpperCase()}`)] };
    case "upper":
      return { content: [text(`invalid token ${value.toUpperCase()}`)] };
    case "lower":
      return { content: [text(`invalid token ${value.toLowerCase()}`)] };
    case "base64":
      return { content: [text(Buffer.from(`user:${value}`).toString("base64"))] };
    case "url":
      return { content: [text(`https://x.test/?k=${encodeURIComponent(value)}`)] };
    case "unicode-escape":
      return {
        content: [text(JSON.stringify({ v: value }).replace(/[a-z]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`))],
      };
    case "go-html":
      return {
        content: [text(JSON.stringify({ v: value }).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`))],
      };
    case "php-slash":
      return { content: [text(JSON.stringify({ v: value }).replace(/\//g, "\\/"))] };
    case "structured":
      return { content: [text("ok")], structuredContent: { token: value } };
    case "meta":
      return { content: [text("ok")], _meta: { debug: { token: value } } };
    case "image":
      return {
        content: [
          { type: "image", mimeType: "image/png", data: Buffer.from(`\x89PNG..${value}..`).toString("base64") },
        ],
      };
    case "embedded":
      return { content: [{ type: "resource", resource: { uri: "file:///env", text: `TOKEN=${value}` } }] };
    case "blob":
      return {
        content: [
          {
            type: "resource",
            resource: { uri: "file:///env", blob: Buffer.from(`TOKEN=${value}\n`).toString("base64") },
          },
        ],
      };
    case "iserror":
      return { isError: true, content: [text(`401 unauthorized: ${value}`)] };
    default:
      return { content: [text(`the value is ${value}`)] };
  }
}

const server = new Server(
  { name: "vault-leak", version: "1.0.0" },
  { capabilities: { tools: {}, resources: {}, prompts: {}, logging: {}, completions: {} } },
);
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "leak",
      description: `returns the credential (configured as ${fromEnv()})`,
      inputSchema: { type: "object", properties: { form: { type: "string" }, token: { type: "string" } } },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const args = request.params.arguments ?? {};
  const value = typeof args.token === "string" ? args.token : fromEnv();
  // a form is sent as `zz` and its name, a word no result holds (the proxy asks before sending a value it read)
  const form = String(args.form ?? "plain").replace(/^zz/, "");
  if (form === "error") throw new McpError(-32000, `upstream refused token ${value}`, { token: value });
  if (form === "throw") throw new Error(`cannot use ${value}`);
  if (form === "log") {
    await server.sendLoggingMessage({ level: "error", logger: "auth", data: `bad credential ${value}` });
    await server.sendLoggingMessage({ level: "error", data: { header: `Bearer ${value}` } });
  }
  if (form === "progress" && extra._meta?.progressToken !== undefined) {
    await extra.sendNotification({
      method: "notifications/progress",
      params: { progressToken: extra._meta.progressToken, progress: 1, total: 2, message: `using ${value}` },
    });
  }
  return result(form, value);
});
server.setRequestHandler(ListResourcesRequestSchema, async () => ({
  resources: [{ uri: "file:///env", name: `env (${fromEnv()})`, mimeType: "text/plain" }],
}));
server.setRequestHandler(ReadResourceRequestSchema, async () => ({
  contents: [
    { uri: "file:///env", mimeType: "text/plain", text: `TOKEN=${fromEnv()}` },
    {
      uri: "file:///env.bin",
      mimeType: "application/octet-stream",
      blob: Buffer.from(`TOKEN=${fromEnv()}`).toString("base64"),
    },
  ],
}));
server.setRequestHandler(ListPromptsRequestSchema, async () => ({
  prompts: [{ name: "login", description: `log in with ${fromEnv()}` }],
}));
server.setRequestHandler(GetPromptRequestSchema, async () => ({
  messages: [{ role: "user", content: text(`my token is ${fromEnv()}`) }],
}));
server.setRequestHandler(CompleteRequestSchema, async () => ({
  completion: { values: [fromEnv()], total: 1, hasMore: false },
}));
process.stderr.write(`vault-leak: started with ${envName}=${fromEnv()}\n`);
await server.connect(new StdioServerTransport());
