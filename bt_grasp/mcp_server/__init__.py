"""The MCP tool server: bt_grasp's perception and manipulation tools for LLM planners.

`session.ToolSession` is the transport-free core (one persistent episode, one small tree per
tool call); `server.build_server` wires it to the `mcp` SDK; `cli.add_serve_parser` adds
`bt-grasp serve`. Importing this package does not import `mcp` (nor anything else).
"""
