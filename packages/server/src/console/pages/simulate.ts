/** The policy simulator page: edit a request, see the route and the rule that decided (the script posts it). */
import { escapeHtml } from "../html.js";

/** The request the simulator starts with. */
export const EXAMPLE_REQUEST = {
  tool: "send_email",
  server: "mail",
  agent: "assistant",
  arguments: { to: "someone@example.com", subject: "Quarterly report" },
};

/** The page body. */
export function renderSimulatePage(): string {
  return `<h1>Policy simulator</h1>
<p>Edit the action request and simulate it against the loaded policy and consent graph. Nothing is recorded and no rate limit is spent.</p>
<p>The route is the one <code>/v1/decide</code> gives a caller whose <code>server</code> is only its word: the agents' token, an agent without <code>serve.agent_servers</code>, loopback without a token. A rule or <code>classify:</code> entry for another server may hold for it. An agent held to servers that may name this <code>server</code> is judged under the server it names; its route is shown below when it differs.</p>
<label for="sim-request">Action request (JSON)</label>
<textarea id="sim-request" data-role="sim-request" rows="12" spellcheck="false">${escapeHtml(JSON.stringify(EXAMPLE_REQUEST, null, 2))}</textarea>
<p><button type="button" data-action="simulate">Simulate</button></p>
<section class="result" data-role="sim-result" aria-live="polite"></section>`;
}
