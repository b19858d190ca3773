from ..ftypes import Invalid, Valid
from ..rule import ShardRule, did_you_mean


class UnboundCollectiveAxis(ShardRule):
    """
    ## What it does
    Flags a collective (`psum`, `pmean`, `all_gather`, `psum_scatter`, `ppermute`,
    `axis_index`, `pcast`, ...) over an axis name that no enclosing `shard_map` binds:
    the axis is not among the shard_map's manual axes (`axis_names=`, or all mesh axes
    when not given), or there is no `shard_map` (nor `vmap`/`pmap` with that
    `axis_name`) around the call at all.

    ## Why is this bad?
    Collectives communicate along named axes that exist only inside a mapped function.
    JAX raises `NameError: Found an unbound axis name: model` at trace time (an
    `AssertionError` for a name the mesh lacks altogether). shardcheck follows the
    function into the `shard_map` that maps it, also through helper functions, and
    stays silent where it cannot see every caller.

    ## Example
    ```python
    def body(x):
        return jax.lax.psum(x, "model")
    y = jax.shard_map(body, in_specs=P("data"), out_specs=P("data"), axis_names={"data"})(x)
    ```

    Use instead:
    ```python
    y = jax.shard_map(body, in_specs=P("data"), out_specs=P("data"),
                      axis_names={"data", "model"})(x)
    ```
    """

    CODE = "SC202"
    NAME = "unbound-collective-axis"
    JAX_FACTS = ("collective.unbound_axis",)
    VALID = [Valid("""import jax
import jax.numpy as jnp
from jax import P

def body(x):
    return jax.lax.psum(x, "model")

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.zeros((8,)), P("data"))
    y = jax.jit(jax.shard_map(body, in_specs=P("data"), out_specs=P("data")))(x)
""")]
    INVALID = [
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def body(x):
    return jax.lax.psum(x, "model")

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.zeros((8,)), P("data"))
    f = jax.shard_map(body, in_specs=P("data"), out_specs=P("data"), axis_names={"data"})
    y = jax.jit(f)(x)
""", line=6, message="'model'", jax_error="unbound axis name"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def total(x):
    return jax.lax.psum(x, "data")

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.zeros((8,)), P("data"))
    y = jax.jit(total)(x)
""", line=6, message="not inside any shard_map", jax_error="unbound axis name"),
    ]

    def check(self, ctx):
        for call in ctx.events.collectives:
            bound = call.ctx.proven_bound_axes
            if bound is None:
                continue
            op = call.api
            for axis in call.axes:
                if axis is None or axis in bound:
                    continue
                sm = call.ctx.shard_map
                if sm is not None and bound:
                    mesh = sm.mesh.describe() if sm.mesh is not None else "its mesh"
                    in_mesh = sm.mesh is None or sm.mesh.names is None or axis in sm.mesh.names
                    jax_says = (f"NameError (unbound axis name: {axis})" if in_mesh else
                                "an AssertionError (the axis is not in the mesh at all)")
                    yield self.report(
                        call.node,
                        f"`{op}` uses axis {axis!r}, but the enclosing shard_map binds only "
                        f"{_names(bound)} (on {mesh}){did_you_mean(axis, bound)}. JAX raises "
                        f"{jax_says}. Add {axis!r} to the shard_map's axis_names, or use a bound "
                        "axis.")
                else:
                    yield self.report(
                        call.node,
                        f"`{op}` uses axis {axis!r}, but this code is not inside any shard_map "
                        f"(or vmap/pmap) that binds it. JAX raises NameError (unbound axis "
                        f"name: {axis}). Call it from the body of `jax.shard_map`, or let JAX "
                        "insert the communication: under jax.jit with explicit shardings, use "
                        "jnp ops with out_sharding= instead.")


def _names(axes) -> str:
    names = sorted(axes)
    return repr(names[0]) if len(names) == 1 else "(" + ", ".join(repr(a) for a in names) + ")"
