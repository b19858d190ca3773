import libcst as cst

from sharding_types import AxisType

from .. import facts
from ..ftypes import Invalid, Valid
from ..rule import ShardRule


class ConstraintAxisNotAuto(ShardRule):
    """
    ## What it does
    Flags `jax.lax.with_sharding_constraint` naming a mesh axis that is not Auto where the
    constraint is not an assert: a Manual axis inside a `shard_map` body, or an Explicit
    axis of a `NamedSharding` when no mesh is set (or the context mesh is not all
    Explicit).

    ## Why is this bad?
    `with_sharding_constraint` is a hint to the compiler about Auto axes. Only under a
    context mesh whose axes are all Explicit does it act differently: as an assert that
    the array already has that sharding (see `sharding-constraint-assert`). Anywhere
    else JAX raises `ValueError: The spec of NamedSharding passed to
    with_sharding_constraint can only refer to Auto axes of the mesh`. Inside a
    `shard_map` body each value is already a local shard, so a constraint over a manual
    axis has nothing to say.

    ## Example
    ```python
    mesh = jax.make_mesh((2, 4), ("data", "model"))          # Explicit axes
    @jax.jit
    def f(x):
        return jax.lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P("data")))
    f(x)                                                      # no jax.set_mesh
    ```

    Use instead:
    ```python
    with jax.set_mesh(mesh):          # the constraint asserts x's sharding
        f(x)
    # or change the sharding in the type: jax.sharding.reshard(x * 2, P("data"))
    ```
    """

    CODE = "SC207"
    NAME = "constraint-axis-not-auto"
    JAX_FACTS = ("with_sharding_constraint.non_auto_axis", "make_mesh_axis_type")
    VALID = [
        Valid("""import jax
import jax.numpy as jnp
from jax import P
from jax.sharding import NamedSharding

mesh = jax.make_mesh((2, 4), ("data", "model"))

@jax.jit
def f(x):
    return jax.lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P("data")))

with jax.set_mesh(mesh):
    y = f(jax.device_put(jnp.ones((8,)), P("data")))
"""),
        Valid("""import jax
import jax.numpy as jnp
from jax import P
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)

def body(xb):
    return jax.lax.with_sharding_constraint(xb * 2, P(None, "model"))

with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8, 8)), P("data"))
    y = jax.jit(jax.shard_map(body, in_specs=P("data"), out_specs=P("data"),
                              axis_names={"data"}))(x)
"""),
    ]
    INVALID = [
        Invalid("""import jax
import jax.numpy as jnp
from jax import P
from jax.sharding import NamedSharding

mesh = jax.make_mesh((2, 4), ("data", "model"))

@jax.jit
def f(x):
    return jax.lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P("data")))

y = f(jnp.ones((8,)))
""", line=10, message="no mesh is set", jax_error="can only refer to Auto axes"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

mesh = jax.make_mesh((2, 4), ("data", "model"))

def body(xb):
    return jax.lax.with_sharding_constraint(xb * 2, P("data"))

with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8,)), P("data"))
    y = jax.jit(jax.shard_map(body, in_specs=P("data"), out_specs=P("data")))(x)
""", line=8, message="Manual inside this shard_map", jax_error="can only refer to Auto axes"),
    ]

    def check(self, ctx):
        for node, fact in ctx.facts(facts.ConstraintAxisNotAuto):
            axis, kind = fact.axis, fact.axis_type
            if kind is AxisType.Manual:
                how = "which is Manual inside this shard_map"
                fix = ("Drop the constraint: inside the body each value is already the local "
                       "shard. Constrain only non-manual Auto axes, or constrain outside the "
                       "shard_map")
            else:
                how = f"which is {kind.value} on {fact.mesh.describe()}"
                where = ("no mesh is set" if fact.context == "with no mesh set" else
                         "the context mesh's axes are not all Explicit")
                how += f", and {where}"
                fix = ("Set the mesh (`with jax.set_mesh(mesh):`) so that the constraint acts "
                       "as an assert on Explicit axes, or change the sharding with "
                       "`jax.sharding.reshard`")
                if _default_types(fact.mesh, ctx.profile):
                    n = len(fact.mesh.names or ())
                    fix += (f". The mesh's axes are {kind.value} because `jax.make_mesh` "
                            f"was given no `axis_types=` (JAX {ctx.profile.version}'s default): "
                            "for code that relies on Auto propagation, make it with "
                            f"`axis_types=(AxisType.Auto,) * {n}`")
            yield self.report(
                node,
                f"`with_sharding_constraint` can name only Auto axes here, but "
                f"`{fact.spec.describe()}` names {axis!r}, {how}. JAX raises ValueError (The "
                "spec of NamedSharding passed to with_sharding_constraint can only refer to "
                f"Auto axes of the mesh). {fix}.")


def _default_types(mesh, profile) -> bool:
    """Whether ``mesh`` is a ``jax.make_mesh(sizes, names)`` given no ``axis_types``,
    whose axes have the version's default type."""
    node = getattr(mesh, "node", None)
    if getattr(mesh, "origin", None) != "make_mesh" or not isinstance(node, cst.Call):
        return False
    if any(a.keyword is not None and a.keyword.value == "axis_types" for a in node.args):
        return False
    positional = [a for a in node.args if a.keyword is None]
    return len(positional) <= 2 and not any(a.star for a in node.args) \
        and profile.behaviour.make_mesh_axis_type != "Auto"
