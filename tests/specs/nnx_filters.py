"""NNX filter tables: a StateSharding shards a module's variables by the first filter
that matches each one's path."""
import jax
from flax import nnx
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))


def sharding(*names):
    return NamedSharding(mesh, P(*names))


class MLP(nnx.Module):
    def __init__(self, rngs):
        self.up = nnx.Linear(8, 32, rngs=rngs)
        self.down = nnx.Linear(32, 8, rngs=rngs)


state_sharding = nnx.StateSharding({
    nnx.All(nnx.PathContains("up"), nnx.PathContains("kernel")): sharding(None, "model"),
    nnx.PathContains("up"): sharding("model"),
    nnx.All(nnx.PathContains("down"), nnx.PathContains("kernel")): sharding("model", None),
    ...: sharding(),
})


@nnx.jit(in_shardings=(state_sharding,))
def place(m):
    pass


model = MLP(nnx.Rngs(0))
place(model)

# StateSharding also takes a list of (filter, sharding) pairs
pairs = nnx.StateSharding([
    (nnx.PathContains("bias"), sharding("data")),
    (nnx.Param, sharding(None, "data")),
])


@nnx.jit(in_shardings=(pairs,))
def place_pairs(m):
    pass


pair_model = MLP(nnx.Rngs(3))
place_pairs(pair_model)

# the functional spelling: a prefix tree of the module's state (a mapping, not a list)
prefix_tree = nnx.prefix(MLP(nnx.Rngs(1)), {
    nnx.PathContains("kernel"): sharding("data", None),
    ...: sharding(),
}, graph=True)


@nnx.jit(out_shardings=prefix_tree, graph=True, graph_updates=False)
def build():
    return MLP(nnx.Rngs(2))


built = build()
