/**
 * Intent templates for common jobs: a person starts from one, names the values only they can name
 * (their own address, the payee), and hands the file to `acp proxy --intent` or `acp run --intent`.
 * Action globs are over `server.tool`; `{server}` placeholders are filled from `--server NAME=SERVER`.
 */

/** What a template says and which trusted values it asks the person for. */
export interface IntentTemplate {
  readonly name: string;
  readonly summary: string;
  /** Trusted-value lists the person fills (`--trusted recipients=me@example.com`). */
  readonly asks: Readonly<Record<string, string>>;
  readonly intent: Readonly<Record<string, unknown>>;
}

/** The shipped templates. */
export const INTENT_TEMPLATES: readonly IntentTemplate[] = [
  {
    name: "summarise-my-day",
    summary: "read the calendar and the inbox, and mail a summary to me only",
    asks: { recipients: "your own address: the only one the summary may go to" },
    intent: {
      goal: "Summarise my day from my calendar and inbox and mail the summary to me.",
      allowed_actions: ["*.read_*", "*.list_*", "*.get_*", "*.search_*", "*.send_email"],
      forbidden_actions: ["*.delete_*", "*.forward_*", "*.share_*", "*.transfer_*", "*.pay_*"],
      trusted_values: { recipients: [] },
      budgets: { max_calls: 50, max_consequential_calls: 2 },
    },
  },
  {
    name: "triage-my-inbox",
    summary: "read, label and archive mail; every reply is asked first; nothing is deleted or forwarded",
    asks: { recipients: "people you are happy for replies to go to (optional)" },
    intent: {
      goal: "Triage my inbox: label and archive what is routine, draft replies for me to confirm.",
      allowed_actions: ["*.read_*", "*.list_*", "*.get_*", "*.search_*", "*.label_*", "*.archive_*", "*.send_email"],
      forbidden_actions: ["*.delete_*", "*.forward_*", "*.transfer_*", "*.pay_*"],
      confirm_actions: ["*.send_email"],
      trusted_values: { recipients: [] },
      budgets: { max_calls: 200, max_consequential_calls: 20 },
    },
  },
  {
    name: "pay-a-bill",
    summary: "pay one bill I name: only to the account I give, every payment confirmed",
    asks: { accounts: "the IBAN or account the bill is paid to" },
    intent: {
      goal: "Pay the bill I named, to the account I named, once.",
      allowed_actions: ["*.read_*", "*.list_*", "*.get_*", "*.search_*", "*.pay_*", "*.transfer_*", "*.send_money"],
      forbidden_actions: ["*.delete_*", "*.update_password", "*.add_payee"],
      confirm_actions: ["*.pay_*", "*.transfer_*", "*.send_money"],
      trusted_values: { accounts: [] },
      budgets: { max_calls: 30, max_consequential_calls: 1 },
    },
  },
];

/** The template of that name, or undefined. */
export function findIntentTemplate(name: string): IntentTemplate | undefined {
  return INTENT_TEMPLATES.find((t) => t.name === name);
}
