"""The one renderer: tables, JSON and CSV for people and machines (output), Prometheus families (metrics), Storm UI's
lag document (lagdoc), MCP documents (mcp) and config show (settings), made from the result objects."""
