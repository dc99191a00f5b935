"""The repairs: reset, restore, migrate and delete (reset, restore, migrate), each planned by the core from fresh
reads (reads), guarded, backed up, written atomically per spout through the one writer (writer), read back and logged
(readback)."""
