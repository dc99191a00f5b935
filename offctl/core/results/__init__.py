"""The results the faces hand to render/: what a peek, a repair, an audit and an MCP plan came to, as frozen
records of plain values and core types (no I/O), so that the renderer can name what it renders."""
