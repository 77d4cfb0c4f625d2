import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { openStateDb, createPendingConsentStore } from "@acp/store";
import { answerPendingConsent } from "@acp/proxy";
import type { DemoHome } from "./demo-home.js";
import { prepareMyDay, type AgentStep } from "./reference-agent.js";

const USER = "me@example.com";
const ACP_BIN = fileURLToPath(new URL("../../bin/acp.js", import.meta.url));

/** What one run of the reference agent did. */
export interface DemoRun {
  readonly steps: readonly AgentStep[];
  /** Mail that actually left (the mail server's outbox). */
  readonly sent: readonly { to: string; subject: string }[];
}

function readOutbox(path: string): { to: string; subject: string }[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as { to: string; subject: string });
}

/**
 * Starts the servers, runs the agent against them and closes them, waiting for each process to end. An abort
 * of `stop` closes them at once (the agent's pending call fails) and the run ends with that error.
 */
async function withClient<T>(
  transports: StdioClientTransport[],
  run: (clients: Client[]) => Promise<T>,
  stop?: AbortSignal,
): Promise<T> {
  stop?.throwIfAborted();
  const clients = transports.map(() => new Client({ name: "reference-agent", version: "1.0.0" }));
  let closing: Promise<unknown> | undefined;
  const closeAll = (): Promise<unknown> => (closing ??= Promise.all(clients.map((c) => c.close())));
  const onStop = (): void => void closeAll();
  stop?.addEventListener("abort", onStop, { once: true });
  try {
    await Promise.all(clients.map((c, i) => c.connect(transports[i] as StdioClientTransport)));
    const result = await run(clients);
    stop?.throwIfAborted();
    return result;
  } finally {
    stop?.removeEventListener("abort", onStop);
    await closeAll();
  }
}

/** Run 1: the agent talks to the calendar and mail servers directly, as it would without ACP. */
export async function runWithoutAcp(demo: DemoHome, outbox: string, stop?: AbortSignal): Promise<DemoRun> {
  const spawn = (script: string): StdioClientTransport =>
    new StdioClientTransport({
      command: process.execPath,
      args: [script],
      env: { DEMO_OUTBOX: outbox },
      stderr: "ignore",
    });
  const steps = await withClient(
    [spawn(demo.calendar), spawn(demo.mail)],
    async ([calendar, mail]) => {
      // One agent, two servers: route each tool to the server that has it.
      const router = {
        callTool: (
          params: { name: string; arguments?: Record<string, unknown> },
          schema?: undefined,
          options?: object,
        ) =>
          (params.name === "read_events" ? (calendar as Client) : (mail as Client)).callTool(params, schema, options),
      } as unknown as Client;
      return prepareMyDay(router, { read: "read_events", inbox: "list_inbox", send: "send_email" }, USER);
    },
    stop,
  );
  return { steps, sent: readOutbox(outbox) };
}

/** Options of the run through ACP. */
export interface AcpRunOptions {
  /** Answers a pending consent request the way the demo's person does; null leaves it to the terminal. */
  readonly person: ((request: unknown, reasons: unknown) => { decision: "approved" | "denied"; reason: string }) | null;
  readonly onConsent?: (request: unknown, reasons: unknown) => void;
  readonly stderr?: (chunk: string) => void;
  /** Aborted to stop the run early: `acp proxy` (and through it the servers) is closed and the run fails. */
  readonly stop?: AbortSignal;
}

/** The scripted person: watches `state.db` like `acp pending` does and answers like `acp deny` would. */
function startPerson(demo: DemoHome, options: AcpRunOptions): () => void {
  let stopped = false;
  const db = openStateDb(join(demo.home, "state.db"));
  const store = createPendingConsentStore(db);
  const tick = (): void => {
    if (stopped) return;
    for (const row of store.listPending(Date.now())) {
      options.onConsent?.(row.request, row.reasons);
      if (options.person === null) continue;
      const answer = options.person(row.request, row.reasons);
      answerPendingConsent(
        store,
        { id: row.id, decision: answer.decision, approverId: "demo-person", reason: answer.reason },
        new Date(),
      );
    }
    setTimeout(tick, 50);
  };
  tick();
  return () => {
    stopped = true;
    db.close();
  };
}

/** Run 2: the same agent, the same servers, behind `acp proxy`. */
export async function runWithAcp(demo: DemoHome, options: AcpRunOptions): Promise<DemoRun> {
  options.stop?.throwIfAborted();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [ACP_BIN, "proxy"],
    env: { PATH: process.env["PATH"] ?? "", HOME: demo.root, ACP_HOME: demo.home, ACP_PASSPHRASE: demo.passphrase },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => options.stderr?.(chunk.toString("utf8")));
  const stopPerson = startPerson(demo, options);
  try {
    const steps = await withClient(
      [transport],
      ([client]) =>
        prepareMyDay(client as Client, { read: "read_events", inbox: "list_inbox", send: "send_email" }, USER),
      options.stop,
    );
    return { steps, sent: readOutbox(demo.outbox) };
  } finally {
    stopPerson();
  }
}
