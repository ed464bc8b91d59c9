"""`uji acp`: uji as an Agent Client Protocol agent on stdio, for editors (Zed, JetBrains,
Neovim plugins). The protocol's JSON-RPC and its typed messages come from the official
Python SDK (`agent-client-protocol`, imported as `acp`); this package maps uji's sessions,
events, questions and modes onto it:

- `server.py` starts the connection on stdin/stdout (the protocol owns stdout);
- `agent.py` answers the client's requests, one uji `App` and `Agent` per session;
- `updates.py` turns uji's events, and a saved session's messages, into `session/update`s.
"""
