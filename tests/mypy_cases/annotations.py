# Annotations: malformed types, assignments, # type: ignore[sharding].
import jax
import jax.numpy as jnp
from sharding_types import Sharded


def bad(x: Sharded[jax.Array, "float32[8@data"]) -> None: ...  # E: Invalid sharding type "float32[8@data"


def worse(x: Sharded[jax.Array, "floot32[8]"]) -> None: ...  # E: unknown dtype


def assign(a: Sharded[jax.Array, "float32[8@data,4]"],
           m: Sharded[jax.Array, "float32[8@model,4]"]) -> None:
    y: Sharded[jax.Array, "float32[8@data,4]"] = a
    z: Sharded[jax.Array, "float32[8@data,4]"] = m  # E: "m" assigned to a variable declared "float32[8@data,4]", got "float32[8@model,4]"
    w: Sharded[jax.Array, "float32[8@data,4]"] = jnp.zeros((8, 4))
    q: Sharded[jax.Array, "float32[8@data,4]"] = m  # type: ignore[sharding]
