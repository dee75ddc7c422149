"""The chat as an MCP *host*: admin-registered MCP servers become the agent's tools.

`models.McpServer` is the admin's registration (URL, secret headers, enabled, which
agents); `tools.mcp_tools` turns each allowed server's tool listing (cached, left out
while its breaker is open: `health`) into `chat.agent.tools.base.Tool` objects named
`SERVER__TOOL`; `calling` carries one call of a run across its attempts (`records.McpCall`):
rounds with a 2026-07-28 server made by the worker, calls to a 2025-11-25 server made by
the session host (`host`, `hosted`); `client` talks to a server with the official `mcp`
SDK; `elicit` turns a server's question into the `questionnaires.elicitations` card kind;
`demo` is a bundled server reachable without configuration (`builtin:demo`).
"""
