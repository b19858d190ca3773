from ..facts import InSpecsConflict
from ..ftypes import Invalid, Valid
from ..rule import ShardRule
from sharding_types import format_spec

_HEAD = """import jax
import jax.numpy as jnp
from jax import P

mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
"""


class ShardMapInSpecsMismatch(ShardRule):
    """
    ## What it does
    Flags a `shard_map` whose `in_specs` shard an input over Explicit mesh axes other
    than the ones the input is sharded over (as the analyzer infers its type).

    ## Why is this bad?
    On Explicit axes JAX checks the specs against the argument's sharding and raises
    `ValueError: in_specs passed to shard_map: ... does not match the specs of the
    input` at trace time. JAX checks only where the manual axes are all Explicit: with
    an Auto axis among them it reshards the input silently, and nothing is reported. A
    `shard_map` with `axis_names=` naming only some mesh axes is checked over those axes
    from JAX 0.12 on; up to 0.11 JAX reshards its inputs silently (see "Applies to";
    `jax-version` in `[tool.shardcheck]` selects the version, 0.10 by default).

    ## Example
    ```python
    x = jax.device_put(x, P("data", None))
    y = jax.shard_map(f, in_specs=P("model", None), out_specs=P("model", None))(x)
    ```

    Use instead:
    ```python
    y = jax.shard_map(f, in_specs=P("data", None), out_specs=P("data", None))(x)
    ```
    or `jax.sharding.reshard(x, P("model", None))` first.
    """

    CODE = "SC204"
    NAME = "shard-map-in-specs-mismatch"
    JAX_FACTS = ("shard_map.in_specs_mismatch", "shard_map_checks_partial_manual_in_specs")
    VALID = [Valid(_HEAD + """    x = jax.device_put(jnp.ones((8, 16)), P("x", None))
    y = jax.shard_map(lambda b: b * 2, in_specs=P("x", None), out_specs=P("x", None))(x)
"""), Valid(_HEAD + """    x = jax.device_put(jnp.ones((8, 16)), P("x", "y"))
    # manual over "x" only: the input's sharding over "x" is what in_specs say
    y = jax.shard_map(lambda b: b * 2, in_specs=P("x", None), out_specs=P("x", None),
                      axis_names={"x"})(x)
"""), Valid("""import jax
import jax.numpy as jnp
from jax import P
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))
with jax.set_mesh(mesh):
    x = jnp.ones((8, 16))
    # an Auto axis among the manual ones: no check either
    y = jax.shard_map(lambda b: b * 2, in_specs=P("x", None), out_specs=P("x", None))(x)
""")]
    INVALID = [
        Invalid(_HEAD + """    x = jax.device_put(jnp.ones((8, 16)), P("x", None))
    y = jax.shard_map(lambda b: b * 2, in_specs=P("y", None), out_specs=P("y", None))(x)
""", line=8, message="in_specs P('y', None)", jax_error="does not match the specs of the input"),
    ]

    def check(self, ctx):
        for node, fact in ctx.facts(InSpecsConflict):
            yield self.report(node, self.message(fact))

    @staticmethod
    def message(f: InSpecsConflict) -> str:
        dims = f.inferred.dims or ()
        return (f"shard_map in_specs {f.spec.describe()} does not match the input's sharding "
                f"{f.inferred}. On Explicit axes JAX checks them: it raises "
                f"ValueError (\"in_specs passed to shard_map: ... does not match the specs "
                f"of the input\"). Fix: make in_specs {format_spec(dims)} (or omit in_specs to "
                f"infer it), or `reshard` the input first.")
