// The session the benchmark runs under: the session runtime of @acp/core with the settings we would ship
// for this assistant, and an intent per trace derived from that trace's user input only.
import { readFileSync } from "node:fs";
import { createReplaySessions } from "@acp/cli";
import { classifyAction } from "@acp/core";
import { intentFromPrompt } from "./intent-from-prompt.mjs";

/** Whether this build has a session runtime. */
export const SESSION_RUNTIME = typeof createReplaySessions === "function";

/**
 * Session settings we would ship for this assistant, by one schema-driven field classification (bench/README.md,
 * "Argument classes"):
 * - destinations and identifiers (recipients, accounts, URLs, channels, people, passwords, amounts as text):
 *   tracked whole and by the identifiers inside;
 * - payload (what a message says, a subject, a file's text, an event's title, description and place): only
 *   the identifiers inside are tracked (an address or link written into a body is a destination too);
 * - times and references to the user's own objects found by a search (file and event ids): not tracked.
 * Directories of the user's own world vouch for their whole entries: the address book, the chat workspace's
 * channel and member lists, and the sender and channel of a chat message (set by the chat service, not by
 * the message's author). Instruction-like text in untrusted content makes every later call ask, reads included.
 */
export const BENCH_SESSION_SETTINGS = {
  escalate_after_instructions: true,
  // and every later read too: once the agent may be following what it read, even a lookup is its doing
  reads: { after_instructions: "ask" },
  directories: [
    // the user's address book, on the mail-and-calendar server
    { tool: "workspace.search_contacts_by_*", fields: ["email", "name"] },
    // the company chat: its channels, its members, and who sent a message where (set by the chat service)
    { tool: "slack.get_channels" },
    { tool: "slack.get_users_in_channel" },
    { tool: "slack.read_channel_messages", fields: ["sender", "recipient"] },
    { tool: "slack.read_inbox", fields: ["sender", "recipient"] },
  ],
  provenance: {
    unknown: "ask",
    named_sources: true,
    payload_arguments: ["body", "subject", "content", "description", "location"],
    label_arguments: ["title"],
    untracked_arguments: [
      ...["start_time", "end_time", "new_start_time", "new_end_time", "date", "start_day", "end_day"],
      ...["file_id", "event_id"],
    ],
  },
};

/** The settings for a command line: `--no-detection` drops the escalation on instruction-like text. */
export function benchSettings(argv) {
  const s = argv.includes("--no-detection")
    ? { ...BENCH_SESSION_SETTINGS, escalate_after_instructions: false, reads: { after_instructions: "accept" } }
    : BENCH_SESSION_SETTINGS;
  return s;
}

/** The first user input of a benchmark line (its prompt). */
export function promptOf(line) {
  return line.events.find((e) => e.type === "user_input")?.text ?? "";
}

/**
 * A fresh session per trace. `prompts` maps a trace name to its user input; `tools` is tools.json.
 * `classify` is the policy's classify list.
 */
export function benchSessions({ prompts, tools, classify, now, settings = BENCH_SESSION_SETTINGS }) {
  return createReplaySessions({
    intentFor: (name) => {
      const suite = name.split("/")[0];
      const isSystem = (tool) => classifyAction({ server: suite, tool, arguments: {} }, classify).category === "system";
      return intentFromPrompt(prompts.get(name) ?? "", suite, tools[suite] ?? [], isSystem);
    },
    settings,
    classify,
    now,
  });
}

/** Reads tools.json of the benchmark. */
export function readTools(path) {
  return JSON.parse(readFileSync(path, "utf8"));
}
