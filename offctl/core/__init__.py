"""offctl's pure core, in rooms by concern, each importing only those before it: storm (what a release of a spout
does with what is stored, and how Storm's JSON libraries read it), records (what Storm stores, parsed; the rows,
the findings and their catalogue), rules (the numbered rules, and how each consumer is judged), time (the findings
made after the read, and status over time) and plans (the safe-rewrite planner, its guards and its cost). Nothing
here opens a connection, a file or a clock: adapters bring the data, the caller passes `now`, and every rule is
tested from tables of plain values."""
