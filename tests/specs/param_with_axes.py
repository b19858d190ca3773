"""t5x-style parameters: names kept beside each parameter (``params_axes``), resolved by
the project's rules (declared in the test's config, as a project's YAML would)."""
import flax.linen as nn
from flax.linen import partitioning as nn_partitioning


class Mlp(nn.Module):
    @nn.compact
    def __call__(self, x):
        wi = nn_partitioning.param_with_axes("wi", nn.initializers.zeros, (16, 32),
                                             axes=("embed", "mlp"))
        wo = nn_partitioning.param_with_axes("wo", nn.initializers.zeros, (32, 16),
                                             axes=("mlp", "embed"))
        return (x @ wi) @ wo
