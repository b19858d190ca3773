"""Parameter trees placed through tables of specs: dict comprehensions over
``params.items()``, ``jax.tree.map`` with a tree of specs, and specs built from a rank."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

SPECS = {"embed": P("y", None), "proj": P(None, "y"), "bias": P()}


def last_dim(x, axis="y"):
    return P(*([None] * (x.ndim - 1)), axis)


def main():
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    params = {"embed": jnp.zeros((16, 8)), "proj": jnp.zeros((8, 16)), "bias": jnp.zeros((16,))}
    placed = {k: jax.device_put(v, NamedSharding(mesh, SPECS[k])) for k, v in params.items()}
    embed = placed["embed"]
    proj = placed["proj"]
    mapped = jax.tree.map(lambda v, s: jax.device_put(v, NamedSharding(mesh, s)), params, SPECS)
    bias = mapped["bias"]
    names = [k for k in params.keys()]
    sizes = {k: v.shape[0] for k, v in placed.items()}
    cols = jax.device_put(params["proj"], NamedSharding(mesh, last_dim(params["proj"])))
    rows = jax.device_put(params["bias"], NamedSharding(mesh, last_dim(params["bias"], "x")))
    return embed, proj, bias, names, sizes, cols, rows


main()
