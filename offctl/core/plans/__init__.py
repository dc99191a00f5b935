"""The plans of a repair: their targets, their guards, the rewritten records and what their writes cost."""
