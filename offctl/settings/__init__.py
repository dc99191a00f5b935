"""Settings resolved once, for every face: the one option table (options), the resolution from flags, environment,
contexts and profiles (resolve), the records it makes (run), the connection, the config file and the sandbox's state."""
