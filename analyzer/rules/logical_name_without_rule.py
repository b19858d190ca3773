from ..ftypes import Invalid, Valid
from ..jaxapi.logical import LogicalResolution
from ..logical_config import names_any_config_maps
from ..ftypes import WARNING
from ..rule import ShardRule

_PRELUDE = """import jax
import jax.numpy as jnp
import flax.linen as nn
from jax.sharding import AxisType, PartitionSpec as P
RULES = [("batch", "data"), ("embed", "model")]
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
"""


class LogicalNameWithoutRule(ShardRule):
    """
    ## What it does
    Flags a logical axis name (Flax `nn.with_logical_constraint`,
    `nn.logical_to_mesh_axes`, `nn.with_logical_partitioning`, `nnx.Param(out_sharding=)`,
    `nnx.with_partitioning`) that no rule of the logical axis rules in force maps to mesh
    axes. Under NNX a name no rule maps is a mesh axis name, as Flax's own guides write
    them (`nnx.with_partitioning(init, (None, "model"))` with no rules at all): such a
    name is flagged only where rules are in force and it is not an axis of the mesh the
    value is sharded on (or that mesh is unknown).

    Where the rules come from a YAML/JSON file that discovery picked (no `file` or `rules`
    in `[tool.shardcheck.logical]`), that file is a guess at the config the model runs
    with: a name that another rule file of the project maps is not flagged (maxdiffusion
    keeps one config per model family; discovery picks `base14.yml`, whose table has no
    rule for the Wan models' `'mlp'`, which their own config maps).

    ## Why is this bad?
    Flax does not complain. Linen (flax 0.12) leaves a dim whose name has no rule
    unsharded (`with_logical_constraint`'s default `RulesFallback.AXIS_IS_UNSHARDED`), so
    a typo such as `"embd"` for `"embed"` silently replicates the dim on every device: more
    memory, more communication, and no error. NNX keeps a name with no rule as it is and
    hands it to JAX as a mesh axis name, which JAX rejects once the value is sharded on a
    mesh without such an axis. It is often intended (a dim meant replicated), but as often
    a typo or a rule missing from the table; name replicated dims `None` to say so.

    ## Example
    ```python
    RULES = [("batch", "data"), ("embed", "model")]
    with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
        y = nn.with_logical_constraint(x, ("batch", "embd"))  # dim 1 replicated
    ```

    Use instead:
    ```python
    with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
        y = nn.with_logical_constraint(x, ("batch", "embed"))  # or ("batch", None)
    ```

    ## References
    flax/linen/spmd.py (`logical_to_mesh_axes`, `RulesFallback`) and flax/core/spmd.py
    (`from_sharding_rules`) of flax 0.12.8; the resolution is modelled in
    analyzer/logical_axes.py and tested against the installed flax.
    """

    CODE = "SC110"
    NAME = "logical-name-without-rule"
    SEVERITY = WARNING
    JAX_SINCE = None  # flax's resolution, not JAX's: the same under every supported JAX
    VALID = [Valid(_PRELUDE + """with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
    y = nn.with_logical_constraint(jnp.zeros((8, 16)), ("batch", None))
    assert y.sharding.spec == P("data", None), y.sharding.spec
"""),
        # NNX with mesh axis names and no rules (Flax's GSPMD guide): nothing to map
        Valid(_PRELUDE + """from flax import nnx
with jax.set_mesh(mesh):
    w = nnx.Param(jnp.zeros((4, 8)), out_sharding=(None, "model"))
    assert w.sharding.spec == P(None, "model"), w.sharding.spec

class Block(nnx.Module):
    def __init__(self, rngs):
        init = nnx.with_partitioning(nnx.initializers.lecun_normal(), ("data", "model"))
        self.dense = nnx.Linear(4, 8, kernel_init=init, rngs=rngs)

with jax.set_mesh(mesh):
    b = Block(nnx.Rngs(0))
    assert b.dense.kernel.sharding.spec == P("data", "model"), b.dense.kernel.sharding.spec
""")]
    INVALID = [Invalid(_PRELUDE + """with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
    y = nn.with_logical_constraint(jnp.zeros((8, 16)), ("batch", "embd"))
""", line=8, message="'embd'", jax_outcome="wrong-result",
        witness="assert y.sharding.spec == P('data', 'model'), y.sharding.spec")]

    def check(self, ctx):
        logical = getattr(ctx.config, "logical", None)
        elsewhere = None  # names any rule file of the project maps: read once, if needed
        for node, fact in ctx.facts(LogicalResolution):
            named = {n for n, _ in fact.rules}
            missing = [n for n in fact.unmatched if n not in named]
            found = logical is not None and logical.discovered and fact.rules == logical.rules
            if found and missing:  # a guess at the run's config: another may map the name
                if elsewhere is None:  # a walk of the project and a stat per config file
                    elsewhere = names_any_config_maps(ctx.config.root)
                missing = [n for n in missing if n not in elsewhere]
            if fact.library == "nnx":  # NNX hands an unmatched name to JAX as a mesh axis
                axes = fact.mesh.names if fact.mesh is not None else None
                if axes is not None:  # an axis of the mesh it shards on: meant as one
                    missing = [n for n in missing if n not in axes]
                elif not named:  # no rules at all: the names are the mesh's axes
                    continue
            if not missing:
                continue
            if fact.library == "linen":
                effect = ("Flax leaves " + ("that dim" if len(missing) == 1 else "those dims")
                          + " unsharded (replicated on every device) without a word")
            else:
                effect = ("NNX passes " + ("it" if len(missing) == 1 else "them")
                          + " to JAX unchanged, as mesh axis names")
            names = ", ".join(repr(n) for n in missing)
            known = ", ".join(repr(n) for n in dict.fromkeys(sorted(named))) or "none"
            where = (f"the logical axis rules discovered in {logical.source}, nor in any "
                     "other rule file of the project" if found and logical is not None
                     else "the logical axis rules in force")
            yield self.report(
                node,
                f"logical axis name{'s' if len(missing) > 1 else ''} {names} in "
                f"`{fact.api.rsplit('.', 1)[-1]}` {'have' if len(missing) > 1 else 'has'} no "
                f"rule in {where} (rules for: {known}); {effect}. "
                "Add a rule, fix the name, or write None for a dim meant replicated.")
