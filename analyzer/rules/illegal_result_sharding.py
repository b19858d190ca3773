from ..facts import DuplicateResultAxis
from ..ftypes import Invalid, Valid
from ..rule import ShardRule
from sharding_types import format_spec
from ..transfer.printing import fmt_op

_HEAD = """import jax
import jax.numpy as jnp
from jax import P

mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
"""


class IllegalResultSharding(ShardRule):
    """
    ## What it does
    Flags an op whose result would be sharded over one mesh axis on two dims:
    a contraction, by JAX's dot_general rule (batch dims, then the left operand's free
    dims, then the right's; the classic case is `z @ z.T` with `z` row-sharded, whose
    result would be `[N@x, N@x]`), and an elementwise op broadcasting its operands
    against each other (`sq[:, None] + sq[None, :]` with `sq: [N@x]`, a pairwise
    distance's first step).

    ## Why is this bad?
    An axis can shard only one dim of an array. JAX raises `ShardingTypeError:
    dot_general operation ... produces an illegally sharded result` (for a broadcast,
    `add operation ...`) at trace time.

    ## Example
    ```python
    z = jax.device_put(z, P("data", None))
    gram = z @ z.T
    ```

    Use instead:
    ```python
    gram = jnp.matmul(z, z.T, out_sharding=P("data", None))
    ```

    For a broadcast, replicate one side first: `sq[:, None] + reshard(sq, P())[None, :]`.
    """

    CODE = "SC303"
    NAME = "illegal-result-sharding"
    JAX_FACTS = ("dot_general.illegal_result", "broadcast.illegal_result")
    VALID = [Valid(_HEAD + """    z = jax.device_put(jnp.ones((8, 16)), P("x", None))
    gram = jnp.matmul(z, z.T, out_sharding=P("x", None))
    outer = jnp.einsum("i,j->ij", z[:, 0], jax.device_put(jnp.ones((4,)), P("y")))
    sq = jnp.sum(z * z, axis=-1)
    d = sq[:, None] + jax.sharding.reshard(sq, P())[None, :]
""")]
    INVALID = [
        Invalid(_HEAD + """    z = jax.device_put(jnp.ones((8, 16)), P("x", None))
    gram = z @ z.T
""", line=8, message="on two dims", jax_error="illegally sharded result"),
        Invalid(_HEAD + """    a = jax.device_put(jnp.ones((8,)), P("x"))
    b = jax.device_put(jnp.ones((4,)), P("x"))
    outer = jnp.einsum("i,j->ij", a, b)
""", line=9, message="mesh axis 'x'", jax_error="illegally sharded result"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def pairwise_sq_norms(emb):
    sq = jnp.sum(emb * emb, axis=-1)
    return sq[:, None] + sq[None, :]

mesh = jax.make_mesh((8,), ("data",))
with jax.set_mesh(mesh):
    emb = jax.device_put(jnp.ones((64, 16)), P("data", None))
    d = jax.jit(pairwise_sq_norms)(emb)
""", line=7, message="replicate one side", jax_error="add operation with inputs"),
    ]

    def check(self, ctx):
        for node, fact in ctx.facts(DuplicateResultAxis):
            yield self.report(node, message(fact))


def message(f: DuplicateResultAxis) -> str:
    i, j = f.dims
    if f.broadcast:
        return (f"`{fmt_op(f.op)}` broadcasts its operands into a result sharded over mesh axis "
                f"'{f.axis}' on two dims ({i} and {j}): {format_spec(f.spec)}. An axis can shard "
                f"only one dim: JAX raises ShardingTypeError (\"produces an illegally sharded "
                f"result\"). Fix: replicate one side first (`reshard(y, P())`), or shard the "
                f"two sides over different axes.")
    return (f"`{fmt_op(f.op)}` would shard its result over mesh axis '{f.axis}' on two dims "
            f"({i} and {j}): {format_spec(f.spec)}. An axis can shard only one dim: JAX raises "
            f"ShardingTypeError (\"produces an illegally sharded result\"). Fix: `reshard` one "
            f"operand (e.g. all-gather it with `reshard(y, P())`) or pass `out_sharding=` "
            f"naming each axis once.")
