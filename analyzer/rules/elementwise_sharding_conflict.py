from ..facts import BroadcastConflict
from ..ftypes import Invalid, Valid
from ..rule import ShardRule
from sharding_types import format_entry, format_spec
from ..transfer.printing import fmt_op

_HEAD = """import jax
import jax.numpy as jnp
from jax import P

mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
"""


class ElementwiseShardingConflict(ShardRule):
    """
    ## What it does
    Flags an elementwise operation (`+`, `*`, `jnp.maximum`, comparisons, ...) whose
    operands are sharded over *different* mesh axes along the same dim, after
    broadcasting, as JAX's `broadcasting_sharding_rule` sees them on an Explicit mesh.

    ## Why is this bad?
    JAX raises `ShardingTypeError: add got incompatible shardings for
    broadcasting` at trace time. Combining a sharded operand with a replicated one is
    fine (the result takes the sharding), as is a size-1 dim broadcast against a sharded
    one; only two different shardings of one dim conflict. `x` versus `(x, y)` is a
    conflict too.

    ## Example
    ```python
    a = jax.device_put(a, P("data", None))
    b = jax.device_put(b, P("model", None))
    c = a + b
    ```

    Use instead:
    ```python
    c = a + jax.sharding.reshard(b, P("data", None))
    ```
    """

    CODE = "SC302"
    NAME = "elementwise-sharding-conflict"
    JAX_FACTS = ("broadcast.incompatible",)
    VALID = [Valid(_HEAD + """    a = jax.device_put(jnp.ones((8, 16)), P("x", None))
    b = jax.device_put(jnp.ones((8, 16)), P(None, "y"))
    r = jnp.ones((8, 16))
    c = a + b + r
    d = a * jax.device_put(jnp.ones((1, 16)), P(None, "y"))
"""), Valid("""import jax
import jax.numpy as jnp
from jax import P


def loss_fn(w, x):
    logits = x @ w
    return (logits ** 2).mean(), logits


mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    w = jax.device_put(jnp.ones((16, 8)), P(None, "y"))
    x = jax.device_put(jnp.ones((8, 16)), P("x", None))
    labels = jax.device_put(jnp.ones((8, 8)), P("x", None))
    (loss, logits), grads = jax.value_and_grad(loss_fn, has_aux=True)(w, x)
    err = logits - labels
""")]
    INVALID = [
        Invalid(_HEAD + """    a = jax.device_put(jnp.ones((8, 16)), P("x", None))
    b = jax.device_put(jnp.ones((8, 16)), P("y", None))
    c = a + b
""", line=9, message="sharded differently along dim 0", jax_error="incompatible shardings"),
        Invalid(_HEAD + """    a = jax.device_put(jnp.ones((8, 16)), P(("x", "y"), None))
    b = jax.device_put(jnp.ones((8, 16)), P("x", None))
    c = jnp.maximum(a, b)
""", line=9, message="along dim 0", jax_error="incompatible shardings"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P


def loss_fn(w, x):
    logits = x @ w
    return (logits ** 2).mean(), logits


mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    w = jax.device_put(jnp.ones((16, 8)), P(None, "y"))
    x = jax.device_put(jnp.ones((8, 16)), P("x", None))
    labels = jax.device_put(jnp.ones((8, 8)), P("y", None))
    (loss, logits), grads = jax.value_and_grad(loss_fn, has_aux=True)(w, x)
    err = logits - labels
""", line=17, message='along dim 0',
                jax_error='incompatible shardings for broadcasting'),
    ]

    def check(self, ctx):
        for node, fact in ctx.facts(BroadcastConflict):
            yield self.report(node, message(fact))


def message(f: BroadcastConflict) -> str:
    # JAX names the primitive whose rule fails; where that depends on the dtype, elide it
    quote = f"{f.primitive or '...'} got incompatible shardings for broadcasting"
    op = fmt_op(f.op) if f.op != "comparison" else "this comparison"
    return (f"`{op}` combines operands sharded differently along dim {f.dim}: "
            f"{', '.join(format_spec(s) for s in f.specs)}. JAX raises ShardingTypeError "
            f"(\"{quote}\"). Fix: `reshard` one operand so both are sharded "
            f"{format_entry(f.left)} (or both {format_entry(f.right)}) along that dim.")
