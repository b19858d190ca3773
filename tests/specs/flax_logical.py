"""A Flax Linen block that names dims logically (resolved only with a rule table)."""
import flax.linen as nn
import jax.numpy as jnp


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
