from ..ftypes import Invalid, Valid
from ..jaxapi.specs import spec_leaves
from ..rule import ShardRule, axes_str

_HEAD = """import jax
import jax.numpy as jnp
from jax import P

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8, 16)), P("data", None))
"""


class SpecAxisNotManual(ShardRule):
    """
    ## What it does
    Flags a `shard_map` with `axis_names=` (manual over only some mesh axes) whose
    `in_specs` or `out_specs` name a mesh axis that is not among them.

    ## Why is this bad?
    A `shard_map` splits its inputs and joins its outputs over its manual axes only; over
    the other axes the body sees the global array's own sharding, which the specs cannot
    change. JAX raises `ValueError: shard_map in_specs argument must refer to an axis
    marked as manual ({'data'}), but: in_specs refers to 'model'` at trace time (the
    same for `out_specs`), only when the code first runs. Checked on JAX 0.10.2 and
    0.12.0.1; `axis_names=` is `jax.shard_map`'s (JAX 0.7 on). A name the mesh does not
    have at all is `unknown-mesh-axis`.

    ## Example
    ```python
    f = jax.shard_map(body, in_specs=P("data", "model"), out_specs=P("data", "model"),
                      axis_names={"data"})
    ```

    Use instead:
    ```python
    f = jax.shard_map(body, in_specs=P("data", "model"), out_specs=P("data", "model"),
                      axis_names={"data", "model"})
    ```
    or leave `'model'` out of the specs and let the body keep the array's sharding over it.
    """

    CODE = "SC209"
    NAME = "spec-axis-not-manual"
    JAX_FACTS = ("shard_map.spec_axis_not_manual",)
    VALID = [Valid(_HEAD + """    f = jax.shard_map(lambda b: b * 2, in_specs=P("data"), out_specs=P("data"),
                      axis_names={"data"})
    y = jax.jit(f)(x)
    g = jax.shard_map(lambda b: b * 2, in_specs=P("data", "model"),
                      out_specs=P("data", "model"))
    z = jax.jit(g)(jax.reshard(x, P("data", "model")))
""")]
    INVALID = [
        Invalid(_HEAD + """    f = jax.shard_map(lambda b: b * 2, in_specs=P("data", "model"), out_specs=P("data"),
                      axis_names={"data"})
    y = jax.jit(f)(x)
""", line=8, message="in_specs P('data', 'model') names 'model'", jax_error="marked as manual"),
        Invalid(_HEAD + """    f = jax.shard_map(lambda b: b * 2, in_specs=P("data"), out_specs=P("data", "model"),
                      axis_names={"data"})
    y = jax.jit(f)(x)
""", line=8, message="out_specs P('data', 'model') names 'model'", jax_error="marked as manual"),
    ]

    def check(self, ctx):
        seen = set()
        for sm in ctx.events.shard_maps:
            mesh, manual = sm.mesh, sm.axis_names
            if manual is None or sm.axis_names_unknown or mesh is None or mesh.names is None \
                    or sm.ctx.manual_axes:  # nested: the outer body's mesh decides
                continue
            for label, specs in (("in_specs", sm.in_specs), ("out_specs", sm.out_specs)):
                for spec in spec_leaves(specs):
                    stray = [a for a in dict.fromkeys(spec.axis_names())
                             if a in mesh.names and a not in manual]
                    node = spec.node or sm.node
                    if not stray or (id(node), label) in seen:
                        continue
                    seen.add((id(node), label))
                    yield self.report(node, self.message(label, spec, stray, manual))

    @staticmethod
    def message(label, spec, stray, manual) -> str:
        names = ", ".join(repr(a) for a in stray)
        return (f"shard_map {label} {spec.describe()} names {names}, which "
                f"{'is' if len(stray) == 1 else 'are'} not among its manual axes "
                f"{axes_str(sorted(manual))} (`axis_names=`). JAX raises ValueError at trace "
                f"time (\"shard_map {label} argument must refer to an axis marked as manual\"). "
                f"Fix: add {names} to `axis_names`, or leave {'it' if len(stray) == 1 else 'them'} "
                f"out of the spec: over the other axes the body keeps the array's own sharding.")
