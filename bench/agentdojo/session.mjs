// The session the benchmark runs under: the session runtime of @acp/core with the settings we would ship
// for this assistant, and an intent per trace derived from that trace's user input only.
import { readFileSync } from "node:fs";
import { createReplaySessions } from "@acp/cli";
import { intentFromPrompt } from "./intent-from-prompt.mjs";

/** Whether this build has a session runtime. */
export const SESSION_RUNTIME = typeof createReplaySessions === "function";

/**
 * Session settings we would ship for this assistant. Provenance tracks destinations (recipients, accounts,
 * URLs, channels, people); it does not track payloads (what a message says, what a file holds, an event's
 * title, place and time) nor references to the user's own objects found by a search (file and event ids).
 * The user's own address book is trusted like the user. Instruction-like text in untrusted content makes
 * every later consequential call ask.
 */
export const BENCH_SESSION_SETTINGS = {
  trusted_servers: ["workspace.search_contacts_by_name", "workspace.search_contacts_by_email"],
  escalate_after_instructions: true,
  provenance: {
    untracked_arguments: [
      ...["body", "subject", "content", "description", "title", "location"],
      ...["start_time", "end_time", "new_start_time", "new_end_time", "date", "start_day", "end_day"],
      ...["file_id", "event_id"],
    ],
  },
};

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
      return intentFromPrompt(prompts.get(name) ?? "", suite, tools[suite] ?? []);
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
