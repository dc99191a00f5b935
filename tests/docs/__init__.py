"""The documents held to the code: the README, the runbooks, the contract, --help, docs/monitoring."""
