"""offctl.faces.audit: see docs/architecture.md."""
