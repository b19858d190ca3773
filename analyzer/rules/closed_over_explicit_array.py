from .. import facts
from ..ftypes import Invalid, Valid
from ..rule import ShardRule

_HEAD = """import jax
import jax.numpy as jnp
import numpy as np
from jax import P

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8,)), P("data"))
"""


class ClosedOverExplicitArray(ShardRule):
    """
    ## What it does
    Flags a `shard_map` body that uses, in an operation, an array from an enclosing scope
    (a global, a variable of the function that builds the shard_map, a parameter of an
    enclosing `jax.jit` function) that lives on a mesh with Explicit axes, sharded or
    replicated. Arrays made under `jax.set_mesh(mesh)` of `jax.make_mesh` live there too.

    ## Why is this bad?
    Inside the body the mapped axes are Manual; JAX cannot bring in a value typed on the
    Explicit mesh. It raises `NotImplementedError: Closing over inputs to shard_map where
    the input is sharded on Explicit axes is not implemented` (for indexing, or when
    some axes stay Explicit through `axis_names=`, a `ValueError` about the context
    mesh). Reading `.shape`/`.dtype` or returning the array untouched is fine, and so is
    closing over a NumPy array, a Python number, or an array on an Auto mesh (JAX
    reshards those).

    ## Example
    ```python
    with jax.set_mesh(mesh):
        w = jax.device_put(w, P("data"))
        def body(xb):
            return xb * w.sum()
        y = jax.shard_map(body, in_specs=P("data"), out_specs=P("data"))(x)
    ```

    Use instead:
    ```python
        def body(xb, wb):
            return xb * jax.lax.psum(wb.sum(), "data")
        y = jax.shard_map(body, in_specs=(P("data"), P("data")), out_specs=P("data"))(x, w)
    ```
    """

    CODE = "SC206"
    NAME = "closed-over-explicit-array"
    JAX_FACTS = ("shard_map.closure_explicit", "make_mesh_axis_type")
    VALID = [
        Valid(_HEAD + """    w = jax.device_put(jnp.ones((8,)), P("data"))

    def body(xb, wb):
        return xb * jax.lax.psum(wb.sum(), "data") * w.shape[0]

    y = jax.jit(jax.shard_map(body, in_specs=(P("data"), P("data")), out_specs=P("data")))(x, w)
"""),
        Valid(_HEAD + """    table = np.arange(4.0)
    scale = 2.0

    def body(xb):
        return xb * table * scale

    y = jax.shard_map(body, in_specs=P("data"), out_specs=P("data"))(x)
"""),
        Valid("""import jax
import jax.numpy as jnp
from jax import P
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8,)), P("data"))
    w = jax.device_put(jnp.ones((8,)), P("data"))

    def body(xb):
        return xb * w.sum()

    y = jax.jit(jax.shard_map(body, in_specs=P("data"), out_specs=P("data")))(x)
"""),
    ]
    INVALID = [
        Invalid(_HEAD + """    w = jax.device_put(jnp.ones((8,)), P("data"))

    def body(xb):
        return xb * w.sum()

    y = jax.jit(jax.shard_map(body, in_specs=P("data"), out_specs=P("data")))(x)
""", line=12, message="`w`", jax_error="Closing over inputs to shard_map"),
        Invalid(_HEAD + """    bias = jnp.zeros((4,))

    def body(xb):
        return xb + bias

    y = jax.shard_map(body, in_specs=P("data"), out_specs=P("data"))(x)
""", line=12, message="`bias`", jax_error="Closing over inputs to shard_map"),
    ]

    def check(self, ctx):
        for node, fact in ctx.facts(facts.ClosedOverExplicitArray):
            v = fact.value
            t = v.sharding_type()
            shown = f" ({t})" if t is not None else ""
            spec = _spec(v.dims) if v.dims is not None else "P(...)"
            # proven only for an array on a known mesh with Explicit axes
            where = v.mesh.describe() if v.mesh is not None else "a mesh"
            yield self.report(
                node,
                f"The shard_map body uses `{fact.name}`{shown}, an array from outside it that "
                f"lives on {where}, a mesh with Explicit axes. Inside the body the "
                "mapped axes are Manual, and JAX raises NotImplementedError (Closing over inputs to "
                "shard_map where the input is sharded on `Explicit` axes is not implemented), "
                "or a ValueError about the context mesh. Pass it to the shard_map as an "
                f"argument, with its own in_specs entry (e.g. {spec}).",
                related=[(v.node, f"`{fact.name}` is made here"),
                         (fact.shard_map, "the shard_map")])


def _spec(dims) -> str:
    parts = []
    for axes in dims:
        if not axes:
            parts.append("None")
        elif len(axes) == 1:
            parts.append(repr(axes[0]))
        else:
            parts.append("(" + ", ".join(repr(a) for a in axes) + ")")
    while parts and parts[-1] == "None":
        parts.pop()
    return "P(" + ", ".join(parts) + ")"
