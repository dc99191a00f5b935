"""The findings made after the read, over time: time lag, retention, commit expiry, open transactions, status."""
