"""Flax models that name dims logically (resolved only with a rule table) or by mesh axes."""
import flax.linen as nn
import jax
import jax.numpy as jnp
from flax import nnx


class MlpBlock(nn.Module):
    features: int = 16

    @nn.compact
    def __call__(self, x):
        x = nn.with_logical_constraint(x, ("batch", "length", "embed"))
        kernel = self.param("kernel", nn.with_logical_partitioning(
            nn.initializers.lecun_normal(), ("embed", "mlp")), (x.shape[-1], self.features))
        return jnp.dot(x, kernel)


class Dense(nn.Module):
    """Partitioned by mesh axis names directly: no rule table needed."""

    @nn.compact
    def __call__(self, x):
        init = nn.with_partitioning(nn.initializers.lecun_normal(), (None, "model"))
        return x @ self.param("kernel", init, (x.shape[-1], 16))


def nnx_inits():
    """NNX names mesh axes unless sharding rules map them: on a known mesh, names it
    lacks are logical."""
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        fsdp = nnx.with_partitioning(nnx.initializers.lecun_normal(), ("data", "model"))
        logical = nnx.with_partitioning(nnx.initializers.lecun_normal(), ("embed", "mlp"))
    return fsdp, logical
