from ..ftypes import Invalid, Valid
from ..rule import ShardRule


_BY_RANK = """import jax
import jax.numpy as jnp
from jax import P
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)


def shard_activation(x):
    if x.ndim == 3:  # each call's array decides the branch
        return jax.lax.with_sharding_constraint(x, P("data", None, "model"))
    elif len(x.shape) == 1:
        return jax.lax.with_sharding_constraint(x, P("data"))
    raise ValueError(x.shape)
"""


class SpecRankMismatch(ShardRule):
    """
    ## What it does
    Flags a `PartitionSpec` with more entries than the array it shards has dimensions.

    ## Why is this bad?
    A spec may be shorter than the array's rank (missing entries mean replicated) but
    never longer. JAX rejects it: `shard_map` with `ValueError` ("in_specs entry which
    is too long"), `device_put` with a `ValueError` or, in older JAX and for some specs,
    an `AssertionError` from deep inside JAX (the words depend on the version: see
    "Applies to").
    It usually means the spec was written for another layout, e.g. before a reshape.
    `jax.jit(in_shardings=/out_shardings=)` are checked at each call against the
    arguments and outputs they apply to, a single spec against every leaf of a tree
    (`ValueError: One of pjit arguments with pytree key path p['b'] is incompatible with
    its sharding annotation ...`).
    A scalar has rank 0: a shard_map argument that is a scalar (a Python number too)
    needs `P()` in `in_specs`, and a scalar output `P()` in `out_specs` (JAX: "out_specs
    entry which is too long"; give a per-shard scalar a singleton axis to shard it).

    The array's shape must be known from the source (`jnp.zeros((8,))`, a reshape, ...).

    ## Example
    ```python
    x = jnp.zeros((8,))
    y = jax.device_put(x, NamedSharding(mesh, P("data", None)))
    ```

    Use instead:
    ```python
    y = jax.device_put(x, NamedSharding(mesh, P("data")))
    ```
    """

    CODE = "SC103"
    NAME = "spec-rank-mismatch"
    JAX_FACTS = ("spec.longer_than_rank", "spec.longer_than_rank_sharded_last",
                 "shard_map.in_spec_too_long", "shard_map.out_spec_too_long",
                 "jit.spec_longer_than_rank")
    VALID = [Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("data")))
"""), Valid("""import jax
import jax.numpy as jnp
from jax import P

def scale_total(xb, s):
    return jax.lax.psum((xb * s).sum(), "data")

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.arange(8.0), P("data"))
    y = jax.shard_map(scale_total, in_specs=(P("data"), P()), out_specs=P())(x, 2.0)
"""), Valid(_BY_RANK + """
with jax.set_mesh(mesh):
    b = jax.jit(shard_activation)(jnp.zeros((8,)))  # rank 1: the first branch is not run
""")]
    INVALID = [
        Invalid(_BY_RANK.replace('P("data"))', 'P("data", "model"))') + """
with jax.set_mesh(mesh):
    b = jax.jit(shard_activation)(jnp.zeros((8,)))
""", line=13, message="has 2 entries, but the array has rank 1",
                jax_error="only valid for values of rank at least 2"),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((8,)), NamedSharding(mesh, P("data", None)))
""", line=5, message="rank 1", jax_error="incompatible|must be equal to aval's ndim"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P
mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.arange(8.0), P("data"))
    y = jax.shard_map(lambda b: b, in_specs=P("data", "model"), out_specs=P("data"))(x)
""", line=7, message="rank 1", jax_error="too long"),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
loss = jax.jit(lambda p: p["w"].sum() + p["b"].sum(),
               in_shardings=NamedSharding(mesh, P("data", None)))
y = loss({"w": jnp.ones((8, 16)), "b": jnp.ones((16,))})
""", line=6, message="argument `p['b']`", jax_error="only valid for values of rank at least 2"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def total(xb):
    return jax.lax.psum(xb.sum(), "data")

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.arange(8.0), P("data"))
    y = jax.shard_map(total, in_specs=P("data"), out_specs=P("data"))(x)
""", line=11, message="rank 0", jax_error="out_specs entry which is too long"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def scale(xb, s):
    return xb * s

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.arange(8.0), P("data"))
    y = jax.shard_map(scale, in_specs=(P("data"), P("data")), out_specs=P("data"))(x, 2.0)
""", line=11, message="rank 0", jax_error="in_specs entry which is too long"),
    ]

    def check(self, ctx):
        for use in ctx.events.spec_uses:
            spec, shape = use.spec, use.shape
            if shape is None or not spec.complete:
                continue
            if len(spec.entries) > len(shape):
                at, related = ctx.spec_place(spec.node or use.node, use.at)
                yield self.report(
                    at,
                    f"`{spec.describe()}` in {use.where} has {len(spec.entries)} entries, but the "
                    f"array has rank {len(shape)} (shape {_shape(shape)}). JAX rejects it (ValueError, "
                    "or an AssertionError for some specs): a spec may be shorter than the rank, "
                    "never longer. Drop the extra entries or "
                    "fix the array's shape.", related=related, fails_at=use.at)


def _shape(shape) -> str:
    inner = ", ".join("?" if s is None else str(s) for s in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"
