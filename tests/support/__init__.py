"""Helpers shared by tests in several folders: hostile clients, the runbook walker, Storm UI's view."""
