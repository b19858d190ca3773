"""A Linen model whose logical names are mapped by the config's rules (no rules in view)."""

import flax.linen as nn


class Mlp(nn.Module):
  mlp_dim: int = 32

  @nn.compact
  def __call__(self, x):
    init = nn.initializers.lecun_normal()
    h = nn.Dense(self.mlp_dim, kernel_init=nn.with_logical_partitioning(init, ('embed', 'mlp')))(x)
    return nn.Dense(x.shape[-1], kernel_init=nn.with_logical_partitioning(init, ('mlp', 'embed')))(h)
