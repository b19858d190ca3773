from ..ftypes import ERROR, WARNING, Invalid, Valid
from ..jax_api import DEPRECATED
from ..rule import ShardRule


class DeprecatedApi(ShardRule):
    """
    ## What it does
    Flags sharding APIs that JAX has deprecated or removed, and names the replacement.
    Removed APIs are errors (the code fails on JAX 0.10.2); deprecated ones that still
    work, with a `DeprecationWarning`, are warnings.

    | API | status in JAX 0.10.2 | use instead |
    |---|---|---|
    | `jax.experimental.shard_map.shard_map` | deprecated in 0.8.0 | `jax.shard_map` |
    | `shard_map(..., check_rep=)` | `jax.shard_map` has no `check_rep` (TypeError) | `check_vma=` |
    | `jax.experimental.pjit.pjit` | deprecated (0.8, Oct 2025) | `jax.jit` |
    | `jax.lax.pvary` | removed in 0.10.0 | `jax.lax.pcast(x, axes, to='varying')` |
    | `jax.device_put_replicated` / `_sharded` | removed in 0.10.0 | `jax.device_put` |
    | `jax.sharding.use_mesh` | removed | `jax.set_mesh` |
    | `jax.sharding.PositionalSharding` | removed | `NamedSharding` |
    | `jax.experimental.maps` (`xmap`, `Mesh`) | removed in 0.4.31 | `jax.shard_map`, `jax.sharding.Mesh` |
    | `with mesh:` (a `Mesh` as context manager) | deprecated (warns) | `with jax.set_mesh(mesh):` |

    ## Why is this bad?
    Removed APIs raise `AttributeError` or `TypeError` on current JAX; deprecated ones
    will. Their replacements also differ in behaviour: `jax.shard_map` takes `mesh=` as
    a keyword and checks varying axes (`check_vma=True`) by default.

    ## Example
    ```python
    from jax.experimental.shard_map import shard_map
    y = shard_map(f, mesh, in_specs=P("data"), out_specs=P("data"), check_rep=False)(x)
    ```

    Use instead:
    ```python
    y = jax.shard_map(f, mesh=mesh, in_specs=P("data"), out_specs=P("data"), check_vma=False)(x)
    ```
    """

    CODE = "SC401"
    NAME = "deprecated-api"
    SEVERITY = ERROR
    VALID = [Valid("""import jax
import jax.numpy as jnp
from jax import P
mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8,)), P("data"))
    body = lambda b: jax.lax.psum(jax.lax.pcast(b, "model", to="varying"), "model")
    y = jax.shard_map(body, in_specs=P("data"), out_specs=P("data"), check_vma=True)(x)
""")]
    INVALID = [
        Invalid("""import jax
import jax.numpy as jnp
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
y = shard_map(lambda b: b, mesh, in_specs=P("data"), out_specs=P("data"))(jnp.ones((8,)))
""", line=3, message="jax.shard_map", jax_outcome="deprecation"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P
mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8,)), P("data"))
    y = jax.shard_map(lambda b: b, in_specs=P("data"), out_specs=P("data"), check_rep=False)(x)
""", line=7, message="check_vma", jax_error="check_rep"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P
mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8,)), P("data"))
    y = jax.shard_map(lambda b: jax.lax.pvary(b, "model"), in_specs=P("data"), out_specs=P("data"))(x)
""", line=7, message="pcast", jax_error="pvary"),
        Invalid("""import jax
import jax.numpy as jnp
mesh = jax.sharding.Mesh(jax.devices(), ("data",))
with mesh:
    y = jnp.ones((8,)) * 2
""", line=4, message="jax.set_mesh", jax_outcome="deprecation"),
    ]

    def check(self, ctx):
        for use in ctx.events.api_uses:
            if use.kind == "keyword":
                if use.detail == "check_rep":
                    yield self.report(
                        use.node, "`jax.shard_map` has no `check_rep` argument (it was renamed "
                        "`check_vma` when shard_map moved out of jax.experimental in JAX 0.8): "
                        "JAX raises TypeError. Use check_vma=.", ERROR,
                        fix_content=None)
                else:
                    yield self.report(
                        use.node, "`jax.experimental.shard_map.shard_map` takes `check_rep`, not "
                        "`check_vma`: JAX raises TypeError. Better, move to `jax.shard_map`, which "
                        "takes check_vma=.", ERROR)
                continue
            if use.api == "jax.sharding.Mesh.__enter__":
                yield self.report(
                    use.node, "`with mesh:` (a Mesh as context manager) is deprecated in JAX "
                    "0.10.2 and warns; it also sets the mesh only for pjit-style Auto sharding. "
                    "Use `with jax.set_mesh(mesh):`.", WARNING)
                continue
            dep = DEPRECATED.get(use.api)
            if dep is None:
                continue
            severity = ERROR if dep.removed_in else WARNING
            status = "and fails on JAX 0.10.2" if dep.removed_in else "and still works in JAX 0.10.2 with a DeprecationWarning"
            yield self.report(use.node, f"`{use.api}`: {dep.note} ({status}). Use "
                              f"`{dep.replacement}` instead.", severity)
