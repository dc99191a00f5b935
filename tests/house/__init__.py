"""The house's checks of offctl's source: floors, complexity, one option table, one place for behaviour."""
