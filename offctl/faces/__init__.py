"""offctl.faces: see docs/architecture.md."""
