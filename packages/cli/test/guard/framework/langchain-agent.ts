import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { isGuardRefusal, openGuard, type AskPerson } from "@acp/cli/guard";

/** Your mail client: `send` mails `body` to `to`. */
export interface Mail {
  readonly send: (args: { to: string; body: string }) => Promise<string>;
}

/** One turn of an agent on LangChain.js whose `send_email` tool is guarded by ACP. */
export async function mailAgent(model: BaseChatModel, mail: Mail, ask: AskPerson, prompt: string) {
  const acp = await openGuard({ ask }); // the home in $ACP_HOME: policy, vault, audit
  try {
    acp.user(prompt); // the person's own words: an address in them may be mailed
    const sendEmail = tool(acp.guard("send_email", mail.send, { server: "mail" }), {
      name: "send_email",
      description: "send an email",
      schema: z.object({ to: z.string(), body: z.string() }),
    });
    const agent = model.bindTools!([sendEmail]);
    const messages: BaseMessage[] = [new HumanMessage(prompt)];
    for (let step = 0; step < 3; step++) {
      const reply = await agent.invoke(messages);
      messages.push(reply);
      if (reply.tool_calls === undefined || reply.tool_calls.length === 0) break;
      for (const call of reply.tool_calls) {
        // a refused or denied call throws a GuardRefusal: its message is the tool's answer to the model
        const answer = await sendEmail.invoke(call).catch((err: unknown) => {
          if (!isGuardRefusal(err)) throw err;
          return new ToolMessage({ content: err.message, tool_call_id: call.id ?? "", status: "error" });
        });
        messages.push(answer);
      }
    }
    return messages;
  } finally {
    await acp.close(); // the audit log's final signed checkpoint
  }
}
