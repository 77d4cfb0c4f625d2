// Derives a session intent from the user's words alone — the `user_input` text of a trace — by one fixed,
// documented procedure (bench/README.md, "Intent from the prompt"). It never reads tool output, attack
// text or the benchmark's ground-truth calls. The word lists are plain English for an assistant's actions,
// keyed by the words of the tools' own names; they hold no value, name or phrase of a benchmark task.
//
// 1. Reads (tool names starting get_, search_, list_, read_, check_) are always in the intent.
// 2. A consequential tool is in the intent when the prompt holds a word for its verb AND a word for its
//    object, from the synonym table below. `send_email` needs a sending word and a mail word; `delete_file`
//    a deleting word and a file word.
// 3. When the prompt hands its authority to a source it names ("do the actions specified in the email from
//    …", "follow the instructions in …", "my TODO list at …", "… accordingly"), every consequential tool of
//    the assistant is in the intent: the user has adopted that source's instructions. Destructive and
//    access-changing tools (category `system`) still need a person's confirmation unless the prompt names
//    them itself. Provenance still applies to every argument: a recipient, account or link must come from the
//    user, a directory or a record the user named, and instruction-like text anywhere still escalates.

/** Words for the verb of a tool name. */
const VERBS = {
  send: [
    "send",
    "post",
    "share",
    "email",
    "e-mail",
    "mail",
    "message",
    "write",
    "reply",
    "forward",
    "dm",
    "tell",
    "pay",
    "refund",
    "transfer",
    "return",
  ],
  create: [
    "create",
    "add",
    "make",
    "schedule",
    "set up",
    "book",
    "put",
    "remind",
    "reminder",
    "new",
    "organize",
    "plan",
  ],
  reschedule: ["reschedule", "move", "postpone", "change", "shift"],
  cancel: ["cancel", "call off"],
  delete: ["delete", "remove", "erase"],
  remove: ["remove", "kick", "delete"],
  append: ["add", "append", "extend", "include", "put"],
  share: ["share", "give access", "grant"],
  update: ["update", "change", "adjust", "set", "modify", "correct", "fix", "move", "moved"],
  schedule: ["schedule", "set up", "recurring", "standing order", "every month"],
  reserve: ["reserve", "reservation", "book", "booking"],
  invite: ["invite", "onboard"],
  post: ["post", "publish", "put", "upload"],
};

/** Words for the objects a tool name speaks of. */
const OBJECTS = {
  email: ["email", "e-mail", "mail", "send"],
  calendar: ["calendar", "event", "meeting", "appointment", "reminder", "lunch", "dinner", "schedule"],
  event: ["event", "meeting", "appointment", "reminder", "calendar", "lunch", "dinner"],
  participants: ["participant", "invite", "attendee", "add"],
  file: ["file", "document", "docx", "drive", "list", "sheet", ".txt", ".xlsx"],
  money: ["pay", "money", "refund", "send", "transfer", "bill", "payment", "transaction"],
  transaction: ["transaction", "payment", "rent", "standing order", "subscription", "recurring", "pay"],
  scheduled: ["scheduled", "rent", "standing order", "recurring", "payment"],
  password: ["password"],
  user: ["address", "account information", "user info", "user information", "profile"],
  info: ["address", "information", "info", "profile"],
  hotel: ["hotel", "stay", "room"],
  car: ["car", "rental", "vehicle"],
  restaurant: ["restaurant", "table", "dinner", "lunch"],
  direct: ["message", "dm", "send", "tell", "write"],
  channel: ["channel"],
  slack: ["slack", "workspace"],
  webpage: ["website", "webpage", "web page", "page", "site", ".com"],
};

/** Phrases by which the user hands their authority to a source they name. */
const DELEGATION = [
  "actions specified in",
  "do the actions",
  "follow the instructions",
  "instructions in",
  "as described in",
  "tasks on my",
  "tasks i have",
  "todo list",
  "to-do list",
  "do all the tasks",
  "accordingly",
];

const READ_VERBS = new Set(["get", "search", "list", "read", "check"]);

function holdsAny(prompt, words) {
  return words.some((w) => (w.length <= 3 ? new RegExp(`\\b${w}\\b`).test(prompt) : prompt.includes(w)));
}

/** Whether the prompt names both the verb and an object of a consequential tool. */
function named(tool, prompt) {
  const [verb, ...rest] = tool.split("_");
  const verbs = VERBS[verb] ?? [verb];
  const objects = rest.flatMap((w) => OBJECTS[w] ?? []);
  return holdsAny(prompt, verbs) && (objects.length === 0 || holdsAny(prompt, objects));
}

/**
 * The intent for one user prompt, over the tools of one suite (`[{name}]`). Action names are `suite.tool`.
 * `isSystem(name)` says whether a tool is destructive or changes access (the policy's `system` category).
 */
export function intentFromPrompt(prompt, suite, tools, isSystem = () => false) {
  const text = prompt.toLowerCase();
  const allowed = [];
  const confirm = [];
  const delegated = holdsAny(text, DELEGATION);
  for (const { name } of tools) {
    const action = `${suite}.${name}`;
    if (READ_VERBS.has(name.split("_")[0])) allowed.push(action);
    else if (named(name, text)) allowed.push(action);
    else if (delegated) {
      allowed.push(action);
      if (isSystem(name)) confirm.push(action);
    }
  }
  return { goal: prompt.trim().slice(0, 4000) || "(empty prompt)", allowed_actions: allowed, confirm_actions: confirm };
}
