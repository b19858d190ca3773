"""shardcheck where its users are: the daemon (pre-commit and editors), the language
server, the pytest plugin."""
