# Calls: each argument against its parameter's declared sharding type.
import jax
import jax.numpy as jnp
import sharding_types as st
from sharding_types import Sharded


def layer(x: Sharded[jax.Array, "float32[B@data,D]"],
          y: Sharded[jax.Array, "float32[B@data,D]"]) -> Sharded[jax.Array, "float32[B@data,D]"]:
    return x + y


def caller(a: Sharded[jax.Array, "float32[8@data,4]"],
           b: Sharded[jax.Array, "float32[16@data,4]"],
           m: st.Sharded[jax.Array, "float32[8@model,4]"],
           r: Sharded[jax.Array, "float32[8,4]"],
           h: Sharded[jax.Array, "bfloat16[8@data,4]"],
           v: Sharded[jax.Array, "float32[8@data]"]) -> None:
    layer(a, a)
    layer(a, b)  # E: argument "y" of "layer" declared "float32[B@data,D]", got "float32[16@data,4]" (dim 0 has size 16, but B=8
    layer(m, a)  # E: (dim 0 is sharded over 'model', expected sharded over 'data')
    layer(r, a)  # E: (dim 0 is replicated, expected sharded over 'data')
    layer(h, a)  # E: (dtype bfloat16, expected float32)
    layer(v, a)  # E: (rank 1, expected 2)
    layer(jnp.zeros((8, 4)), a)
    layer(a, y=a)
    layer(x=a, y=b)  # E: argument "y" of "layer"
    out = layer(a, a)
    layer(out, a)
