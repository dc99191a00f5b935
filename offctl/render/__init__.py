"""The one renderer, one module per document, made from the result objects: inspect's tables, JSON and CSV (report),
the plans (plans), the audit (audit), watch (watch), peek (peek), what they share (formats), Prometheus families
(metrics), Storm UI's lag document (lagdoc), MCP documents (mcp) and config show (settings)."""
