"""The faces: each way an on-call reaches offctl (serve and watch, Storm UI's lag script, the MCP server, the Spark
audit, peek, the sandbox, the docs pages), each calling the pipeline and render/, with its own helpers beside it."""
