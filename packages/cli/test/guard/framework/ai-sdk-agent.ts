import { generateText, stepCountIs, tool, type LanguageModel } from "ai";
import { z } from "zod";
import { openGuard, type AskPerson } from "@acp/cli/guard";

/** Your mail client: `send` mails `body` to `to`. */
export interface Mail {
  readonly send: (args: { to: string; body: string }) => Promise<string>;
}

/** One turn of an agent on the Vercel AI SDK whose `send_email` tool is guarded by ACP. */
export async function mailAgent(model: LanguageModel, mail: Mail, ask: AskPerson, prompt: string) {
  const acp = await openGuard({ ask }); // the home in $ACP_HOME: policy, vault, audit
  try {
    acp.user(prompt); // the person's own words: an address in them may be mailed
    return await generateText({
      model,
      prompt,
      tools: {
        send_email: tool({
          description: "send an email",
          inputSchema: z.object({ to: z.string(), body: z.string() }),
          // a refused or denied call throws a GuardRefusal: the SDK hands its message to the model
          execute: acp.guard("send_email", mail.send, { server: "mail" }),
        }),
      },
      stopWhen: stepCountIs(3),
    });
  } finally {
    await acp.close(); // the audit log's final signed checkpoint
  }
}
