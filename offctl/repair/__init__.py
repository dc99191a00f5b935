"""offctl.repair: see docs/architecture.md."""
