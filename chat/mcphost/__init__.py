"""The chat as an MCP *host*: admin-registered MCP servers become the agent's tools.

`models.McpServer` is the admin's registration (URL, secret headers, enabled, which
agents); `tools.mcp_tools` turns each allowed server's tool listing (cached) into
`chat.agent.tools.base.Tool` objects named `SERVER__TOOL`; `client` talks to a server with
the official `mcp` SDK; `elicit` answers a server's elicitation requests by asking the
person in the chat (the `questionnaires.elicitations` card kind); `demo` is a bundled
server reachable without configuration (`builtin:demo`).
"""
