from ..ftypes import Invalid, Valid
from ..jaxapi.logical import LogicalNamesRepeated
from ..rule import ShardRule


class RepeatedLogicalName(ShardRule):
    """
    ## What it does
    Flags Flax Linen logical axis names that name two dims of one array alike
    (`nn.with_logical_constraint(x, ("embed", "embed"))`, `nn.logical_to_mesh_axes`,
    `nn.with_logical_partitioning`) under rules the analyzer can read.

    ## Why is this bad?
    Linen maps each logical name to one dim: flax (0.12) raises `ValueError`
    ("Unsupported: Dimensions ('embed',) occur more than once in array names.") when the
    names are resolved, at the constraint or when the parameter is unboxed. A square
    weight usually wants two names (`("embed_in", "embed_out")`) or one dim left `None`.

    ## Example
    ```python
    with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
        y = nn.with_logical_constraint(x, ("embed", "embed"))
    ```

    Use instead:
    ```python
    with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
        y = nn.with_logical_constraint(x, ("embed", None))
    ```

    ## References
    flax/linen/spmd.py (`_logical_to_mesh_axes`) of flax 0.12.8, modelled in
    analyzer/logical_axes.py and tested against the installed flax.
    """

    CODE = "SC111"
    NAME = "repeated-logical-name"
    JAX_SINCE = None  # flax's check, not JAX's
    VALID = [Valid("""import jax
import jax.numpy as jnp
import flax.linen as nn
from jax.sharding import AxisType
RULES = [("batch", "data"), ("embed", "model")]
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
    y = nn.with_logical_constraint(jnp.zeros((16, 16)), ("embed", None))
""")]
    INVALID = [Invalid("""import jax
import jax.numpy as jnp
import flax.linen as nn
from jax.sharding import AxisType
RULES = [("batch", "data"), ("embed", "model")]
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
    y = nn.with_logical_constraint(jnp.zeros((16, 16)), ("embed", "embed"))
""", line=8, message="'embed'", jax_error="occur more than once in array names")]

    def check(self, ctx):
        for node, fact in ctx.facts(LogicalNamesRepeated):
            names = ", ".join(repr(n) for n in fact.repeated)
            yield self.report(
                node,
                f"logical axis name{'s' if len(fact.repeated) > 1 else ''} {names} "
                f"name{'' if len(fact.repeated) > 1 else 's'} more than one dim in "
                f"`{fact.api.rsplit('.', 1)[-1]}`: flax raises ValueError ('Unsupported: "
                f"Dimensions {fact.repeated!r} occur more than once in array names.'). Give "
                "each dim its own name, or None for a dim meant replicated.")
