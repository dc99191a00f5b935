"""offctl.faces.mcp: see docs/architecture.md."""
