"""shardcheck's mypy plugin (imported as ``shardcheck.plugin``)."""
