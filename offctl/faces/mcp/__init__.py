"""`offctl mcp`: the Model Context Protocol server (server), its runs (runs), plans and writes, and quoting of data
for an AI assistant."""
