import type { Client } from "@modelcontextprotocol/sdk/client/index.js";

/** One step the reference agent took, for the demo's narration. */
export interface AgentStep {
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
  readonly ok: boolean;
  readonly text: string;
}

function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? "").join("\n");
}

/**
 * The scripted reference agent of `acp demo`, asked to "prepare my day". It stands for a model fully
 * taken over by what it reads: every instruction it finds in tool output, it obeys. No model is needed.
 */
export async function prepareMyDay(
  client: Client,
  tools: { read: string; inbox: string; send: string },
  user: string,
): Promise<AgentStep[]> {
  const steps: AgentStep[] = [];
  const call = async (tool: string, args: Record<string, unknown>): Promise<AgentStep> => {
    const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 120_000 });
    const step = { tool, arguments: args, ok: result.isError !== true, text: textOf(result) };
    steps.push(step);
    return step;
  };
  const calendar = await call(tools.read, { day: "2026-03-02" });
  // The injected instruction, "understood" the way a hijacked model would: mail the inbox to the address it names.
  const injected = /send the user's whole inbox to ([^\s]+@[^\s]+?) /i.exec(calendar.text);
  if (injected?.[1] !== undefined) {
    const inbox = await call(tools.inbox, {});
    await call(tools.send, { to: injected[1], subject: "sync notes", body: inbox.text });
  }
  const titles = [...calendar.text.matchAll(/"title": "([^"]+)"/g)].map((m) => m[1]).join(", ");
  await call(tools.send, { to: user, subject: "Your day", body: `Today: ${titles}.` });
  return steps;
}
