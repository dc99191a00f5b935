"""`offctl mcp`: the Model Context Protocol server (server), its runs (runs), plans (plans, compare, apply) and writes,
and quoting of data for an AI assistant."""
