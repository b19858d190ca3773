"""shardcheck's static analyzer (imported as ``shardcheck.analyzer``). Never imports JAX."""
