"""shardcheck's version, in a module of its own so that ``shardcheck --version`` and a
fully cached run read it without importing the model (``sharding_types``)."""

__version__ = "0.1.0"
