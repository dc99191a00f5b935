"""The repairs: reset, restore, migrate and delete, each planned by the core, guarded, backed up, written atomically per
spout through the one writer, read back and logged (reset)."""
