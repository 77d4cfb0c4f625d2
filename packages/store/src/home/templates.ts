/**
 * The files `acp init` writes: a commented `config.yml` (§8.1) and a starter `policy.yml` (§5.1) that is
 * safe by default: reads allowed; writes, sends, publishing and deletes ask; money, shells, deploys and
 * other destructive system tools refused; anything unmatched asks.
 */

/** The commented `config.yml` of a new home; `policyPath` is written as `defaults.policy`. */
export function configTemplate(policyPath: string): string {
  return `# ACP configuration (consent protocol §8.1), written by \`acp init\`.
# Edit freely: ACP keeps these comments when it writes to this file (\`acp config set-secret\`).
# Reference: docs/reference/home.md

# Format version of this file. Always "1" for now.
version: "1"

# Where consent requests go when a rule says \`ask\`: prompt (this terminal), telegram or webhook.
channel: prompt

# The Telegram channel (used when channel is telegram).
telegram:
  # The bot token, sealed with the vault key as "encrypted:<base64>". Never paste a plain token here;
  # run \`acp config set-secret telegram.bot_token\` and give the token on stdin.
  bot_token: ""
  # A self-hosted Bot API server instead of Telegram's own:
  #   api_root: "https://api.telegram.org"
  # The chat that receives consent requests (a number, as a string).
  chat_id: ""

# The webhook channel (used when channel is webhook).
webhook:
  # Where consent requests are POSTed.
  url: ""
  # Where signed decisions come back (HOST:PORT; port 0 picks a free one). On every address (0.0.0.0:PORT)
  # it needs callback_url, the URL the receiver reaches this machine at (default: the listener's own):
  #   callback_listen: "127.0.0.1:0"
  #   callback_url: "https://acp.example.com/acp/consent"
  # The shared secret that signs webhook calls, sealed like bot_token:
  # \`acp config set-secret webhook.secret\`.
  secret: ""

# The MCP proxy.
proxy:
  # The local port the proxy listens on for HTTP clients (\`acp proxy --http\`; --http PORT wins).
  port: 8443
  # The address it listens on (--bind wins). Beyond 127.0.0.1 it needs a bearer token, and TLS in front
  # (an https public_url: the origin a reverse proxy serves it at) or insecure_plain_http:
  #   bind: "127.0.0.1"
  #   public_url: "https://mcp.example.com"
  # true: listen beyond loopback with no TLS in front, the token and every call in clear text (as
  # --insecure-plain-http; warned at every start). Only on a network you trust:
  #   insecure_plain_http: false
  # Seconds one upstream call may take without progress (--call-timeout), and however much progress it
  # sends (--call-max); when tool names get the server__ prefix: on-collision, always or never (--prefix-tools):
  #   call_timeout_seconds: 60
  #   call_max_seconds: 3600
  #   prefix_tools: on-collision
  # Seconds to wait for every upstream to start before serving those up (--start-wait); one still
  # starting joins later (tools/list_changed), so a hanging server does not keep clients from connecting:
  #   start_wait_seconds: 10
  # Start an upstream again when it stops after it was up (1 s, then doubling up to a minute):
  #   restart_upstreams: true
  # Over HTTP (\`acp proxy --http\`), the token every client sends (\`Authorization: Bearer …\`; required
  # beyond 127.0.0.1): make one with \`openssl rand -hex 32\`, give it to your clients, and seal it with
  # \`acp config set-secret proxy.bearer_token\` (ACP_PROXY_TOKEN wins):
  #   bearer_token: ""
  # Tokens that name their agent make the audit say which agent called, whatever the client calls itself:
  #   agent_tokens:
  #     ci_bot: ""    # \`acp config set-secret proxy.agent_tokens.ci_bot\`
  # At most this many HTTP sessions are open at once (an agent with a token of its own: a quarter):
  #   max_sessions: 256
  # At most this many \`tools/call\`s of one session are being decided, waiting for you or forwarded at once
  # (stdio too); one more is refused at once (\`too_many_calls_in_flight\`), never forwarded:
  #   max_calls_in_flight: 64
  # Each agent's share of the policy work (sessions without a token of their own share one): past it, its
  # calls are refused unjudged until it comes back, so one agent cannot hold up the others:
  #   caller_budget: { units: 33554432, seconds: 60 }
  # The real MCP servers behind the proxy; each has a name and a command (stdio) or a url (HTTP). Example:
  #   - name: "files"
  #     command: "npx @modelcontextprotocol/server-filesystem /tmp"
  #   - name: "github"
  #     url: "http://localhost:3001"
  upstream_servers: []

# The session runtime of \`acp proxy\`: what it does with text the agent read (docs/reference/session-runtime.md).
session:
  # Once a tool result reads like instructions to the agent ("ignore previous instructions…"), every later
  # write, message, payment or delete in that session asks you first…
  escalate_after_instructions: true
  # What the session watches on reads.
  reads:
    # …and so does every later read: an agent that obeys injected text usually reads first, then sends.
    after_instructions: ask
  # What the session keeps of where values came from.
  provenance:
    # An address, link or account number read in a tool result stays "read in untrusted content" for this
    # many hours, in later sessions too: sending to it asks you unless you name it (0: this session only).
    remember_hours: 24
# Defaults for consent requests and the policy.
defaults:
  # Seconds a consent request waits for an answer before it is denied.
  timeout_seconds: 120
  # The policy file every command uses unless --policy FILE is given. A relative path is read from this
  # home; ~ and $HOME at its start expand. A file named here that is missing stops acp (never a fall-back).
  policy: ${JSON.stringify(policyPath)}

# The decision service \`acp serve\` (docs/reference/cli/serve.md). Its defaults need no settings: to change
# one, remove the first "# " of each line below (flags such as --port still win).
# serve:
#   # The TCP port (0 picks a free one).
#   port: 8787
#   # The address to listen on. Beyond loopback (0.0.0.0) it needs a bearer token, and TLS (--tls-cert).
#   bind: "127.0.0.1"
#   # Behind a reverse proxy (it may end TLS): the origin browsers use. Links are made with it.
#   public_url: "https://acp.example.com"
#   # true: plain HTTP beyond loopback with no TLS in front; tokens, sign-in links and cookies in clear
#   # text (as --insecure-plain-http; warned at every start). Only on a network you trust.
#   insecure_plain_http: false
#   # queued: a decision's audit event is fsynced within milliseconds after the answer; durable: every
#   # answer waits for its fsync (slower).
#   decision_audit: queued
#   # Each agent's share of the policy work: work units one agent (all agents of the anonymous token
#   # together) may spend at once, back over \`seconds\`; past it its requests are refused unjudged
#   # (caller_budget_exhausted), so one agent cannot hold up the others. Normal calls cost a few hundred.
#   caller_budget:
#     units: 33554432
#     seconds: 60
#   # Consent requests one agent (all agents of the anonymous token together) may have waiting at once, of
#   # the 1000 in all; past it its calls are refused unasked (caller_pending_full), the others still asked.
#   pending_per_caller: 250
#   # The agents' bearer token (asks for decisions), sealed like bot_token:
#   # \`acp config set-secret serve.bearer_token\`.
#   bearer_token: ""
#   # The approvers' token, the only one that answers consent over the API (never give it to an agent):
#   # \`acp config set-secret serve.approver_token\`.
#   approver_token: ""
#   # Agents' tokens that name their agent: a request made with one is recorded as that agent's, and its
#   # sessions are its own. \`acp config set-secret serve.agent_tokens.ci_bot\` for each.
#   agent_tokens:
#     ci_bot: ""

# Where \`acp serve\` keeps its state: SQLite in this home unless a PostgreSQL URL is given (several nodes
# on one database). Keep the password out of this file: pass the whole URL in ACP_STORAGE_URL instead, or
# write it without the password and set PGPASSWORD (\`acp doctor\` warns about a password here).
# storage:
#   # postgres://USER@HOST:5432/DATABASE
#   url: "postgres://acp@127.0.0.1:5432/acp"
#   # Seconds acp serve waits at start for the database to accept connections (0: try once;
#   # --storage-connect-wait wins).
#   connect_wait: 30

# The sandbox of \`acp run\` (docs/guides/sandbox.md): these are its defaults; to change one, remove the first
# "# " of each line below (flags such as --max-memory still win).
# sandbox:
#   # Destinations (HOST:PORT) the agent may reach without asking, e.g. ["api.anthropic.com:443"]
#   # (--allow-egress adds to them).
#   allow_egress: []
#   # The most processes (threads included) the sandbox may hold at once (--max-processes).
#   max_processes: 4096
#   # The most memory the sandbox may use: bytes, or with K, M, G or T (--max-memory); past it the kernel
#   # kills a process of the sandbox.
#   max_memory: 4G
#   # The most CPU time, in CPUs (--max-cpu; e.g. 1.5). No cap unless set:
#   # max_cpu: 2
`;
}

/** The starter `policy.yml`: safe by default. */
export const STARTER_POLICY = `# ACP policy (consent protocol §5.1), written by \`acp init\`. Safe by default:
# reads are allowed; writes, messages, publishing and deletes ask you first; money, shells, deploys and
# other destructive system tools are refused; anything no rule matches asks.
# Rules are read top to bottom and the first match wins. Check a change with \`acp policy validate\`.
version: "1"

# What happens when no rule matches: ask a human.
default_action: ask

rules:
  # Reading (read_*, get_*, list_*, search_*; tools marked read-only by a \`trusted: true\` server) runs unasked.
  - id: allow-reads
    match:
      category: read
    action: allow

  # Moving money is never done on an agent's say-so.
  - id: refuse-financial
    match:
      category: financial
    action: deny

  # Deleting asks, at high risk.
  - id: ask-delete
    match:
      tool: "delete_*"
    action: ask
    level: high
  - id: ask-remove
    match:
      tool: "remove_*"
    action: ask
    level: high

  # Other destructive system tools (drop_*, exec*, shell_*, deploy_*, anything else classed system) are refused.
  - id: refuse-system
    match:
      category: system
    action: deny

  # Acting in the physical world is refused.
  - id: refuse-physical
    match:
      category: physical
    action: deny

  # Writing asks.
  - id: ask-writes
    match:
      category: write
    action: ask
    level: medium

  # Sending messages and email asks, at high risk, and at most 20 a minute.
  - id: ask-communication
    match:
      category: communication
    action: ask
    level: high
    rate_limit: "20/minute"

  # Publishing asks, at high risk.
  - id: ask-public
    match:
      category: public
    action: ask
    level: high

# Names the built-in table (consent protocol §5.5) reads by their first word: send_money would be a
# message. Moving money is money, whatever the verb; add your own tools' names here.
classify:
  - { tool: send_money, category: financial, risk_level: critical }
  - { tool: send_payment, category: financial, risk_level: critical }
  - { tool: make_payment, category: financial, risk_level: critical }
  - { tool: "schedule_transaction", category: financial, risk_level: critical }
  - { tool: "update_scheduled_transaction", category: financial, risk_level: critical }
  - { tool: "wire_*", category: financial, risk_level: critical }
  - { tool: "refund_*", category: financial, risk_level: critical }
`;
