"""offctl.settings: see docs/architecture.md."""
