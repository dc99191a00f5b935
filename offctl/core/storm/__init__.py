"""What Storm does: what each release of a spout does with what is stored, and how it reads its JSON."""
