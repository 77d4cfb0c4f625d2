import { stepCountIs, streamText, tool, type LanguageModel } from "ai";
import { z } from "zod";
import { openGuard } from "@acp/cli/guard";

/** Your CRM client: `search` streams the lines of a search, called with the API key the vault puts in. */
export interface Crm {
  readonly search: (args: { query: string; apiKey?: string }) => AsyncIterable<string>;
}

/** One turn of an agent on the Vercel AI SDK whose streaming `search_contacts` tool is guarded by ACP. */
export async function searchAgent(model: LanguageModel, crm: Crm, prompt: string, show: (progress: unknown) => void) {
  const acp = await openGuard(); // the home in $ACP_HOME: policy, vault (`credentials:` puts in `apiKey`), audit
  try {
    acp.user(prompt);
    const result = streamText({
      model,
      prompt,
      tools: {
        search_contacts: tool({
          description: "search the CRM's contacts",
          inputSchema: z.object({ query: z.string() }),
          // each yield is a preliminary result (the text so far), the last one the tool's output; the guard
          // replaces the vault's values in each, one split across yields too, before the SDK sees it
          execute: acp.guardStream(
            "search_contacts",
            async function* (args: { query: string; apiKey?: string }) {
              let text = "";
              for await (const line of crm.search(args)) yield (text += line);
            },
            { server: "crm" },
          ),
        }),
      },
      stopWhen: stepCountIs(3),
    });
    for await (const part of result.fullStream) {
      // what a UI shows while the tool runs: each preliminary result as the guard passed it on
      if (part.type === "tool-result" && part.preliminary === true) show(part.output);
    }
    return await result.text;
  } finally {
    await acp.close(); // the audit log's final signed checkpoint, after the stream's `tool_call_completed`
  }
}
