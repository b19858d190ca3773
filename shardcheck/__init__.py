"""shardcheck: an explicit-sharding type checker for JAX.

Import names: ``sharding_types`` (the model and runtime assertions),
``shardcheck.analyzer`` (static analysis), ``shardcheck.plugin`` (mypy plugin).
"""

from sharding_types import __version__ as __version__
