"""offctl's pure core: what Storm stores and what a spout does with it (model, storm, jsonsimple,
behaviour), the rules and their findings (analyze, findings), status over time (history, monitor) and the
safe-rewrite planner (plan). Nothing here opens a connection, a file or a clock: adapters bring the data,
the caller passes `now`, and every rule is tested from tables of plain values."""
