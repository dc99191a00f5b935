"""The numbered rules over the records, and how each consumer is judged (its profile, its thresholds)."""
