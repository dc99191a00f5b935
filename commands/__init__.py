"""The Typer command layer (installed as offctl.commands): parse options, call offctl, render."""
