"""A jitted MoE-style step that routes tokens through a shard_map expert kernel; the
kernel is built for the mesh the step runs under."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


class ExpertLayer:
    def __init__(self, mesh, n_experts=4, d=8, hidden=16):
        self.mesh = mesh
        k1, k2 = jax.random.split(jax.random.key(0))
        with jax.set_mesh(mesh):
            self.w_in = jax.random.normal(k1, (n_experts, d, hidden), out_sharding=P("expert")) * 0.1
            self.w_out = jax.random.normal(k2, (n_experts, hidden, d), out_sharding=P("expert")) * 0.1

    def _expert_kernel(self, tokens, w_in, w_out):
        # tokens: [experts_local, capacity, d]; each device runs its own experts
        h = jax.nn.relu(jnp.einsum("ecd,edh->ech", tokens, w_in))
        return jnp.einsum("ech,ehd->ecd", h, w_out)

    def __call__(self, dispatched):
        run = jax.shard_map(self._expert_kernel, mesh=self.mesh,
                            in_specs=(P("expert"), P("expert"), P("expert")),
                            out_specs=P("expert"))
        return run(dispatched, self.w_in, self.w_out)


def main():
    mesh = jax.make_mesh((4, 2), ("expert", "data"))
    layer = ExpertLayer(mesh)

    @jax.jit
    def step(dispatched):
        return layer(dispatched).sum()

    with jax.set_mesh(mesh):
        dispatched = jnp.ones((4, 6, 8), out_sharding=P("expert"))
        print(float(step(dispatched)))


if __name__ == "__main__":
    main()
