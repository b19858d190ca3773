"""The loop back to reality: programs run on devices or traced on a production-sized
abstract mesh, every inferred type compared with ``jax.typeof``, and the collectives of
the compiled HLO reported (``shardcheck confirm``)."""
