"""offctl.render: see docs/architecture.md."""
