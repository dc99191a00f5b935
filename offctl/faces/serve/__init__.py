"""offctl.faces.serve: see docs/architecture.md."""
