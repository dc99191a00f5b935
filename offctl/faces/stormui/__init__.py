"""offctl.faces.stormui: see docs/architecture.md."""
