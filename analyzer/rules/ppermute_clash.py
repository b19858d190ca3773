from .. import facts
from ..ftypes import Invalid, Valid
from ..rule import ShardRule

_HEAD = """import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("data", "model"))
x = jax.device_put(jnp.arange(16.0).reshape(8, 2), NamedSharding(mesh, P("data", None)))
"""


class PpermuteClash(ShardRule):
    """
    ## What it does
    Flags a `jax.lax.ppermute` inside `shard_map` whose pairs (`perm`), every one of them
    known, name one source twice or one destination twice once each index is taken
    modulo the size of the axis it permutes along: a ring built for another number of
    devices (`range(jax.device_count())`, or a literal 8, on an axis of 4), or a
    permutation with a repeated index.

    ## Why is this bad?
    `ppermute` sends each device's block to one device along the axis; the indices are
    positions along that axis, `0` to its size minus one. XLA's lowering takes each index
    modulo the axis size, so a ring over 8 devices on an axis of 4 sends two blocks to
    each device, and JAX raises `ValueError: ppermute sources and destinations must be
    unique` when the program compiles (JAX 0.10.2 and 0.12.0.1; tracing alone, as
    `jax.jit(f).trace(...)`, does not check it). A ring sized by
    `jax.device_count()` is right only while the mesh has one axis.

    ## Example
    ```python
    def shift(block):
        n = jax.device_count()                      # 8 devices, but 'data' has 4
        return jax.lax.ppermute(block, "data", [(i, (i + 1) % n) for i in range(n)])
    ```

    Use instead:
    ```python
    def shift(block):
        n = jax.lax.axis_size("data")               # the axis's own size
        return jax.lax.ppermute(block, "data", [(i, (i + 1) % n) for i in range(n)])
    ```
    """

    CODE = "SC210"
    NAME = "ppermute-clash"
    JAX_FACTS = ("collective.ppermute_clash",)
    VALID = [Valid(_HEAD + """

def shift(block):
    n = jax.lax.axis_size("data")
    return jax.lax.ppermute(block, "data", [(i, (i + 1) % n) for i in range(n)])


y = jax.shard_map(shift, mesh=mesh, in_specs=P("data", None), out_specs=P("data", None))(x)
"""), Valid(_HEAD + """

def swap_pairs(block):
    # a partial permutation: devices 1 and 3 receive nothing (zeros)
    return jax.lax.ppermute(block, "data", [(0, 1), (2, 3)])


y = jax.shard_map(swap_pairs, mesh=mesh, in_specs=P("data", None),
                  out_specs=P("data", None))(x)
""")]
    INVALID = [
        Invalid(_HEAD + """

def shift(block):
    n = 8  # the devices of the test machine, not the axis
    return jax.lax.ppermute(block, "data", [(i, (i + 1) % n) for i in range(n)])


y = jax.shard_map(shift, mesh=mesh, in_specs=P("data", None), out_specs=P("data", None))(x)
""", line=11, message="modulo 4", jax_error="ppermute sources and destinations must be unique"),
        Invalid(_HEAD + """

def exchange(block):
    return jax.lax.ppermute(block, "data", perm=[(0, 1), (1, 0), (2, 1)])


y = jax.shard_map(exchange, mesh=mesh, in_specs=P("data", None),
                  out_specs=P("data", None))(x)
""", line=10, message="destination 1", jax_error="ppermute sources and destinations must be unique"),
    ]

    def check(self, ctx):
        for node, fact in ctx.facts(facts.PermutationClash):
            yield self._finding(node, fact)

    def _finding(self, node, f):
        axes = f.axes[0] if len(f.axes) == 1 else f.axes
        (a, b), k = f.clash, 0 if f.end == "source" else 1
        index = a[k] % f.axis_size
        shown = ", ".join(str(p) for p in f.pairs[:4]) + (", ..." if len(f.pairs) > 4 else "")
        wrapped = a[k] != b[k]
        why = (f"taken modulo {f.axis_size}, as XLA takes them, {a} and {b} have the same "
               f"{f.end} {index}" if wrapped else f"{a} and {b} have the same {f.end} {index}")
        largest = max(max(p) for p in f.pairs)
        fix = ("Build the pairs from the axis's own size, `jax.lax.axis_size(...)` (a ring "
               "sized by `jax.device_count()` fits a mesh of one axis only)"
               if largest >= f.axis_size else
               f"Give each device along the axis at most one {f.end}")
        return self.report(
            node,
            f"`ppermute` over {axes!r} ({f.axis_size} devices, indices 0 to "
            f"{f.axis_size - 1}) is given the pairs {shown}: {why}. JAX raises ValueError "
            "(\"ppermute sources and destinations must be unique\") when the program compiles. "
            f"{fix}.")
