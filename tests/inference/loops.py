"""Loop-carried values: a type that changes across iterations is unknown in the body."""
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P, reshard


def main():
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.zeros((8, 16)), P("x", None))
        c = jax.device_put(jnp.zeros((8, 16)), P("x", None))
        for _ in range(3):
            y = x + 1  # unknown: x is sharded over x, then over y
            z = c * 2
            c = z + 1
            x = reshard(x, P("y", None))
        w = [jnp.ones((4,)) for _ in range(2)]
        a, b = w
    return y, z, a, b


if __name__ == "__main__":
    main()
