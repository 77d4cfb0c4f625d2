/** The text after `acp serve --help`'s options: what it serves, examples, exit codes. */
export const SERVE_HELP_AFTER = `
Serves, from $ACP_HOME:
  POST /pre-tool-check          an Agent Action Contract v1 event in, the decision envelope out
  POST /v1/decide[?wait=true]   a full action request through the one pipeline (wait: for a person)
  GET  /v1/consent               waiting requests, a page at a time (?limit=, ?after=next), long arguments shortened
  GET  /v1/consent/{id}, POST /v1/consent/{id}/response, GET /v1/consent/events (SSE)
  POST /v1/consent/{id}/complete  finish a request whose waiting call was lost (a node restarted)
  GET  /v1/audit                 audit events: the approvers' tokens all, an agent's named token its own
  GET  /metrics                  Prometheus text: the approvers' tokens only (it counts every agent's activity)
  GET  /v1/audit/verify, /healthz, /readyz, /docs, /openapi.json
  POST /mcp                     MCP (streamable HTTP): the tool aana_pre_tool_check
  /console                      the web console (sign in with the one-time link printed at start)
Another method on one of these API paths is 405 method_not_allowed, its Allow header naming the methods it takes.

The console link printed at start signs in --console-as NAME (default $USER): every answer given in that
session is recorded as approver console:NAME. Give others their own link: acp console-link --as NAME.

Two tokens, for two kinds of caller. The agents' bearer token (ACP_BRIDGE_TOKEN or the sealed config
secret serve.bearer_token) asks for decisions (/pre-tool-check, /v1/decide, /mcp) and reads; without one
the API answers loopback callers only, and binding beyond loopback needs one. The approvers' token
(ACP_APPROVER_TOKEN or serve.approver_token) is the only one that answers consent over the API
(POST /v1/consent/{id}/response; the agents' token gets 403 approver_token_required, so an agent cannot
approve what it asked); without it consent is answered in the console, with acp approve or a channel.
Agents' tokens that name their agent (serve.agent_tokens.NAME, each sealed with acp config set-secret
serve.agent_tokens.NAME) do what the agents' token does, and a request made with one is that agent's:
recorded under NAME (a body naming another agent is 403 agent_mismatch), its sessions its own; no other
token may name NAME in a body (403 agent_mismatch), so its audit events are its own.
A request's server is the caller's word unless serve.agent_servers.NAME holds that agent to servers: for
every other caller (the agents' token, an agent without servers) a deny or ask rule with server: holds
whatever server the request names, or none, and a call is judged as named, as for no server and as for
each server a classify: or graph.mapping entry names, the strictest answer standing (server_unverified);
an allow rule's rate_limit counts the call under every reading that meets it (once a call).
Approvers' tokens that name their approver (serve.approver_tokens.NAME) answer as api:NAME.
Trusted-channel keys (serve.trusted_channel_keys.KEY_ID, sealed, 16+ characters) verify the attestation a
/v1/decide graph carries for a trusted_channel_required action; each is taken once by every node.
Every token must differ from every other. A token has at least 16 characters (letters, digits, -._~+/); make one with
\`openssl rand -hex 32\`; keep it in config.yml, sealed, with \`acp config set-secret serve.bearer_token\`
(or serve.approver_token; the value on stdin), or pass it in the environment.
Consent responses are signed with $ACP_HOME/keys/private.key (made by acp init), opened with
ACP_PASSPHRASE or, at a terminal, a prompt. Unlike acp proxy, acp serve (and --stdio, whose passphrase goes
in the MCP client's env) does not start without it: it hides the vault's values from the audit and signs
consent answers and audit checkpoints with it.

A person answers in the console, with acp approve / acp deny, over the API with the approvers' token, or on
the channel config.yml names, as for acp proxy: channel: telegram (telegram.bot_token sealed, chat_id) or
channel: webhook (webhook.url, webhook.secret sealed, callback_listen). On several nodes a Telegram press or
webhook callback that reaches another node is recorded in the shared database for the node that waits.

Behind a reverse proxy or load balancer (nginx, Caddy, an ingress; it may end TLS), give the origin
browsers use: --public-url https://acp.example.com (or serve.public_url). Printed links and acp
console-link use it, a loopback listener also answers requests addressed to its host and sent from its
origin (any other host is 421, a page of any other site 403), the console takes state changes from its
origin, and an https:// one makes the console cookie __Host-, Secure, with HSTS.
Beyond loopback it needs TLS: --tls-cert/--tls-key, or an https:// public URL (TLS ends at the proxy in
front); over plain HTTP the tokens, sign-in links and cookies would cross the network in clear text, so it
does not start unless --insecure-plain-http (or serve.insecure_plain_http: true) accepts that.

config.yml (flags win): serve.port (8787), serve.bind (127.0.0.1), serve.public_url, serve.insecure_plain_http
(false), serve.bearer_token and serve.approver_token (sealed),
serve.decision_audit (queued: the audit event is queued when the answer goes out, fsynced within
milliseconds; durable: every answer waits for its fsync), serve.caller_budget (units, seconds: each
agent's share of the policy work, default 33554432 units back over 60 s; an agent that spent it is refused
unjudged, caller_budget_exhausted, so the others are answered), serve.pending_per_caller (250), storage.url
(PostgreSQL, below). An unknown key or a bad value in serve: or storage: stops the start (exit 4); acp doctor
checks the same, warns about a password in storage.url (pass it in ACP_STORAGE_URL) and if the database answers.

Limits: bodies up to 1 MiB (413), application/json only (415), unknown fields 400, at most 1000 waiting
consent requests (429), 250 of one caller (--pending-per-caller: the agent a token names, or all without a
name; beyond it route refuse, caller_pending_full), headers within 15 s and the request within 30 s (408).

State: SQLite ($ACP_HOME/state.db) and the audit chain $ACP_HOME/audit.jsonl, with nothing to configure.
Every audit event (and every consent request shown to a person) hides the vault's values wherever they
appear, and what config.yml \`redaction:\` names; the vault is read once at start.
Several nodes share one PostgreSQL database instead: the storage URL comes from --storage-url, else
ACP_STORAGE_URL, else storage.url in config.yml (first one set wins). Pending consent, spent nonces,
rate-limit windows, console sessions and the audit chain then live there; answers reach the waiting node
through LISTEN/NOTIFY. acp pending, acp approve and acp deny take the same URL (flag, environment, config).
Started with its database (compose, Kubernetes), a node waits up to 30 s (--storage-connect-wait SECONDS,
storage.connect_wait; 0 does not wait) while it is not accepting connections yet, saying so on stderr at
each attempt; a refusal by a running server (a wrong password, a missing database) stops it at once.
A storage URL that now reaches another database than the home last anchored through it (a new server at the
same address) stops it (audit_anchor_database_changed); after a move made on purpose, start once with
--accept-moved-database, which holds the new database to the old one's anchor (acp docs reference/audit).

Examples:
  acp serve                                  # http://127.0.0.1:8787, prints a console sign-in link
  ACP_BRIDGE_TOKEN=… acp serve --port 9000 --bind 0.0.0.0 --tls-cert cert.pem --tls-key key.pem
  acp serve --stdio                          # the MCP tool on stdin/stdout (for an MCP client config)
  acp serve --public-url https://acp.example.com   # on 127.0.0.1:8787 behind a TLS-terminating proxy
  ACP_STORAGE_URL=postgres://acp:…@db:5432/acp acp serve --port 8787   # one node of several
  acp console-link                           # a fresh sign-in link for the running service

Exit codes: 0 stopped (SIGINT or SIGTERM), 1 cannot listen, read or use the TLS files (checked before the key is opened), open the state or reach
PostgreSQL, write serve.json in the home (a home missing or read-only), or stopped but could not close the state (the database gone: the final audit checkpoint may be missing), 2 bad flags (--port, --tls-cert without --tls-key, --bind beyond loopback without a token,
--bind beyond loopback over plain HTTP (no TLS, no https:// public URL, no --insecure-plain-http),
--console-as not a valid name, --public-url not an origin, --storage-url not a postgres:// URL), 4 an invalid policy, consent graph or config.yml, or a token that is too
short, not sendable after "Bearer ", or the same for agents and approvers.

Guide: acp docs guides/serve · API: acp docs reference/http-api`;
