#!/usr/bin/env node
// A stand-in mail MCP server for `acp demo`: an inbox to read and a `send_email` that "delivers" by
// appending to the file named by DEMO_OUTBOX, so the demo can show what left.
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const INBOX = [
  {
    from: "bank@example.com",
    subject: "Your statement",
    body: "Balance: 12,480.00 EUR. Account DE44 5001 0517 5407 3249 31.",
  },
  { from: "hr@example.com", subject: "Salary review", body: "Your new salary is confirmed from next month." },
  { from: "sam@example.com", subject: "Tomorrow", body: "Can we move our 1:1 to 15:30?" },
];

const outbox = process.env["DEMO_OUTBOX"];
const server = new McpServer({ name: "demo-mail", version: "1.0.0" });
server.registerTool(
  "list_inbox",
  { description: "List the messages in the user's inbox", inputSchema: {}, annotations: { readOnlyHint: true } },
  () => ({ content: [{ type: "text", text: JSON.stringify(INBOX, null, 2) }] }),
);
server.registerTool(
  "send_email",
  {
    description: "Send an email from the user's account",
    inputSchema: { to: z.string(), subject: z.string(), body: z.string() },
  },
  ({ to, subject, body }) => {
    if (outbox !== undefined) appendFileSync(outbox, `${JSON.stringify({ to, subject, bytes: body.length })}\n`);
    return { content: [{ type: "text", text: `sent to ${to}` }] };
  },
);
await server.connect(new StdioServerTransport());
