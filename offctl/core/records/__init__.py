"""The records: what Storm stores, parsed; the rows, the findings and their catalogue; what lies at an offset."""
