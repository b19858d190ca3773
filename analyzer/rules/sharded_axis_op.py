from ..facts import ShardedAxisConflict
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


class ShardedAxisOp(ShardRule):
    """
    ## What it does
    Flags operations that must run along a dim which, on an Explicit mesh, is sharded:
    - indexing with an integer array that is itself sharded (`table[ids]` with `ids`
      sharded over any axis), eagerly and under `jit`;
    - indexing or slicing a sharded dim (`x[0]`, `x[:4]`, `x[idx]`): eagerly only `:`
      keeps it; under `jit` a static slice whose length divides by the axes' size keeps
      it too (`x[:4]` on `8@x`, `x: 2`), while ints and other slices are rejected. Code
      that may run either way (a function not provably called eagerly) is held to the
      traced rule, which rejects only what both modes reject;
    - `cumsum`/`cumprod`/`cummax`/`cummin` along it, and `jnp.cumsum`/`cumprod` without
      `axis=` on an array that is not fully replicated;
    - `sort`/`argsort` and `jnp.median` (which sorts) along it, and `lax.top_k` when the
      last dim is sharded;
    - `jnp.roll` along it by a shift that is not a multiple of the axes' size (JAX 0.12:
      by any shift);
    - `jnp.take_along_axis` along it (or with indices sharded along it), and so optax's
      `softmax_cross_entropy_with_integer_labels` on logits whose class dim is sharded
      (it picks each label's logit with `take_along_axis`); `jnp.take(table, ids,
      axis=0)` as `table[ids]`;
    - linear algebra when one of the two matrix dims is sharded: the factorisations
      (`inv`, `det`, `slogdet`, `solve`, `qr`, `svd`, `pinv`, `eig`, `lax.linalg.lu`,
      `jax.scipy.linalg.cholesky`, ...), the Hermitian ones that first add the matrix to
      its transpose (`eigh`, `eigvalsh`, `jnp.linalg.cholesky`), and
      `lax.linalg.triangular_solve` along its contracting dim. `matrix_power` is fine;
    - `jnp.pad`/`lax.pad` and `lax.dynamic_slice` (`dynamic_slice_in_dim`,
      `dynamic_index_in_dim`) giving a sharded dim a length that does not divide by its
      axes' size (a causal conv's left padding of a sequence-sharded time dim, a sliding
      window read from a cache sharded over its sequence dim);
    - `lax.scan` over `xs` whose leading (scanned) dim is sharded, such as a time-major
      batch resharded as `P("data", None, None)` (JAX raises ValueError, "0th dimension
      of all xs should be replicated").

    ## Why is this bad?
    In explicit mode JAX will not silently gather a sharded dim for these ops: it
    raises `ShardingTypeError` at trace time ("Use `.at[...].get(out_sharding=)`...",
    "slicing on sharded dims ... is not implemented", "Input should be unsharded over the
    axis being reduced", "The input should be fully replicated when axis is not specified",
    "Arguments to sort must be unsharded over the sorting dimension", "Input 0 to lu must
    be unsharded on non-batch dimensions", "add operation ... produces an illegally sharded
    result"). Reductions (`sum`, `max`, `argmax`) over a sharded dim are fine and not
    flagged.

    ## Example
    ```python
    x = jax.device_put(x, P("data", None))
    first = x[0]
    ```

    Use instead:
    ```python
    first = jax.sharding.reshard(x, P())[0]      # or x.at[0].get(out_sharding=P())
    ```
    """

    CODE = "SC306"
    NAME = "sharded-axis-op"
    JAX_FACTS = ("gather.ambiguous", "cumulative.sharded_axis", "sort.sharded_axis",
                 "top_k.sharded_axis", "roll.sharded_axis", "linalg.sharded_matrix_dim",
                 "scan.sharded_xs", "pad.sharded_dim", "dynamic_slice.sharded_dim")
    VALID = [Valid(_HEAD + """    a = jax.device_put(jnp.ones((8, 16)), P("x", None))
    col = a[:, 0]
    cs = jnp.cumsum(a, axis=1)
    so = jnp.sort(a, axis=-1)
    top = jax.lax.top_k(a, 2)
    total = a.sum(axis=0)
    b = jax.device_put(jnp.ones((8, 16)), P(None, "y"))
    hs = jax.lax.scan(lambda h, x: (h + x, h), b[0], b)[1]
    padded = jnp.pad(a, ((1, 1), (0, 3)))
    window = jax.lax.dynamic_slice_in_dim(a, 2, 4, axis=0)
"""), Valid("""import jax
import jax.numpy as jnp
from jax import P


@jax.jit
def head(a):
    return a[:4] * 2


mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    h = head(jax.device_put(jnp.ones((8, 16)), P("x", None)))
"""), Valid("""import jax
import jax.numpy as jnp
from jax import P


def loss_fn(w, x):
    return (x @ w).sum()


mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    w = jax.device_put(jnp.ones((16, 8)), P(None, "y"))
    x = jax.device_put(jnp.ones((8, 16)), P("x", None))
    gw, gx = jax.grad(loss_fn, argnums=(0, 1))(w, x)
    row = gx[:, 0]
"""), Valid("""import jax
import jax.numpy as jnp
from jax import P

mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    table = jax.device_put(jnp.ones((16, 8)), P(None, "y"))
    ids = jax.device_put(jnp.arange(8) % 16, P("x"))
    rows = table[jax.sharding.reshard(ids, P())]
"""), Valid("""import jax
import jax.numpy as jnp
from jax import P

mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    table = jax.device_put(jnp.ones((16, 8)), P(None, "y"))
    ids = jax.device_put(jnp.arange(8) % 16, P("x"))
    rows = table.at[ids].get(out_sharding=P("x", "y"))
"""), Valid("""import jax
import jax.numpy as jnp
from jax import P


@jax.jit
def embed(table, ids):
    return table[ids] * 2


mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    table = jax.device_put(jnp.ones((16, 8)), P(None, "x"))
    ids = jax.device_put(jnp.arange(8) % 16, P())
    out = embed(table, ids)
"""), Valid("""import jax
import jax.numpy as jnp
import optax
from jax import P


def loss_fn(w, h, targets):
    logits = jnp.einsum("btd,dv->btv", h, w, out_sharding=P("x", None, None))
    return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()


mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    w = jax.device_put(jnp.ones((16, 64)), P(None, "y"))
    h = jax.device_put(jnp.ones((8, 4, 16)), P("x", None, None))
    targets = jax.device_put(jnp.zeros((8, 4), jnp.int32), P("x", None))
    loss = jax.jit(loss_fn)(w, h, targets)
""")]
    INVALID = [
        Invalid(_HEAD + """    a = jax.device_put(jnp.ones((8, 16)), P("x", None))
    first = a[0]
""", line=8, message="integer index on dim 0",
                jax_error="output PartitionSpec for the gather"),
        Invalid(_HEAD + """    a = jax.device_put(jnp.ones((8, 16)), P("x", None))
    head = a[:4]
""", line=8, message="a slice", jax_error="output PartitionSpec for the gather"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P


@jax.jit
def tail(a):
    return a[1:] * 2


mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    h = tail(jax.device_put(jnp.ones((8, 16)), P("x", None)))
""", line=8, message="does not divide by the axes' size",
                jax_error="is not divisible by mesh axes"),
        Invalid(_HEAD + """    a = jax.device_put(jnp.ones((8, 16)), P("x", None))
    cs = jnp.cumsum(a, axis=0)
""", line=8, message="jnp.cumsum", jax_error="unsharded over the axis being reduced"),
        Invalid(_HEAD + """    a = jax.device_put(jnp.ones((8, 16)), P(None, "y"))
    s = jnp.sort(a)
""", line=8, message="jnp.sort", jax_error="unsharded over the sorting dimension"),
        Invalid(_HEAD + """    m = jax.device_put(jnp.ones((4, 8, 8)), P(None, "x", None))
    inv = jnp.linalg.inv(m)
""", line=8, message="jnp.linalg.inv", jax_error="unsharded on non-batch dimensions"),
        Invalid(_HEAD + """    a = jax.device_put(jnp.ones((8, 16)), P("x", None))
    m = jnp.median(a, axis=0)
""", line=8, message="jnp.median", jax_error="unsharded over the sorting dimension"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P


def loss_fn(w, x):
    return (x @ w).sum()


mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    w = jax.device_put(jnp.ones((16, 8)), P(None, "y"))
    x = jax.device_put(jnp.ones((8, 16)), P("x", None))
    gw, gx = jax.grad(loss_fn, argnums=(0, 1))(w, x)
    row = gx[0]
""", line=15, message='integer index on dim 0',
                jax_error='output PartitionSpec for the gather'),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    table = jax.device_put(jnp.ones((16, 8)), P(None, "y"))
    ids = jax.device_put(jnp.arange(8) % 16, P("x"))
    rows = table[ids]
""", line=9, message='the index array int32[8@x] is sharded',
                jax_error='output PartitionSpec for the gather'),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P


@jax.jit
def embed(table, ids):
    return table[ids] * 2


mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    table = jax.device_put(jnp.ones((16, 8)), P("x", None))
    ids = jax.device_put(jnp.arange(8) % 16, P())
    out = embed(table, ids)
""", line=8, message='array index on dim 0',
                jax_error='output PartitionSpec for the gather'),
        Invalid("""import jax
import jax.numpy as jnp
import optax
from jax import P


def loss_fn(w, h, targets):
    logits = jnp.einsum("btd,dv->btv", h, w)
    return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()


mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    w = jax.device_put(jnp.ones((16, 64)), P(None, "y"))
    h = jax.device_put(jnp.ones((8, 4, 16)), P("x", None, None))
    targets = jax.device_put(jnp.zeros((8, 4), jnp.int32), P("x", None))
    loss = jax.jit(loss_fn)(w, h, targets)
""", line=9, message="gathers along dim 2 of float32[8@x,4,64@y]",
                jax_error="output PartitionSpec for the gather"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

KERNEL = 4


def causal_conv(x, w):
    x = jnp.pad(x, ((0, 0), (KERNEL - 1, 0), (0, 0)))
    t = x.shape[1] - (KERNEL - 1)
    return sum(x[:, k:k + t, :] * w[k] for k in range(KERNEL))


mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((2, 64, 32)), P(None, "y", None))  # sequence parallel
    y = jax.jit(causal_conv)(x, jnp.ones((KERNEL, 32)))
""", line=9, message="67 long", jax_error="padding on sharded dims"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

WINDOW = 3


@jax.jit
def window(q, cache, pos):
    k = jax.lax.dynamic_slice_in_dim(cache, pos - WINDOW, WINDOW, axis=1)
    return jnp.einsum("bh,bwh->bw", q, k)


mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    cache = jax.device_put(jnp.ones((2, 64, 16)), P(None, "y", None))
    s = window(jnp.ones((2, 16)), cache, 10)
""", line=10, message="3 long", jax_error="dynamic_slice on sharded dims"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P


def rnn(w, h0, xs):
    step = lambda h, x: (jnp.tanh(h @ w + x), h)
    return jax.lax.scan(step, h0, xs)


mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    xs = jax.device_put(jnp.ones((16, 8, 32)), P("x", None, None))  # time-major
    h, hs = jax.jit(rnn)(jnp.eye(32), jnp.zeros((8, 32)), xs)
""", line=8, message="steps along dim 0", jax_error="0th dimension of all xs should be replicated"),
    ]

    def check(self, ctx):
        for node, fact in ctx.facts(ShardedAxisConflict):
            yield self.report(node, message(fact))


# what JAX 0.10.2 raises for each check (verbatim, tested against its messages; "..."
# elides the values JAX fills in)
_JAX_SAYS = {
    "gather": "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the "
              "gather indexing",
    "slice": "slicing on sharded dims where out dim ... is not divisible by mesh axes ... is "
             "not implemented",
    "cumulative": "Input should be unsharded over the axis being reduced",
    "unspecified-axis": "The input should be fully replicated when axis is not specified to "
                        "{primitive}",
    "sort": "Arguments to sort must be unsharded over the sorting dimension",
    "top_k": "The input should be unsharded over the axis along which to compute the top_k "
             "values",
    "factorization": "Input 0 to {primitive} must be unsharded on non-batch dimensions",
    "symmetrize": "add operation with inputs: ... produces an illegally sharded result",
    "triangular_solve": "triangular solve input `a` must be unsharded on the contracting axis",
    "scan": "0th dimension of all xs should be replicated",
    "pad": "padding on sharded dims where out dim ... is not divisible by mesh axes ... is not "
           "implemented",
    "dynamic_slice": "dynamic_slice on sharded dims where out dim ... is not divisible by mesh "
                     "axes ... is not implemented",
}
_INDEX = {"int": "an integer index", "slice": "a slice", "array": "an array index"}


def message(f: ShardedAxisConflict) -> str:
    jax = f'JAX raises ShardingTypeError ("{_JAX_SAYS[f.check].format(primitive=f.primitive)}")'
    arr, d, axes = str(f.array), f.dim, format_entry(f.axes)
    unsharded = format_spec(tuple(() if i == d else a for i, a in enumerate(f.array.dims or ())))
    if f.index == "sharded-index":
        return (f"the index array {arr} is sharded over {axes} (dim {d}), which makes this "
                f"indexing a gather whose output sharding JAX cannot resolve in explicit mode. "
                f"{jax}. Fix: `reshard` the index to `P()` first, or give the output sharding "
                f"with `x.at[ids].get(out_sharding=P(...))`.")
    if f.index is not None and f.check == "gather":
        return (f"indexing {arr} with {_INDEX[f.index]} on dim {d}, which is sharded over "
                f"{axes}, is a gather JAX cannot shard in explicit mode. {jax}. Fix: `reshard` "
                f"{axes} off that dim first, or use `x.at[...].get(out_sharding=P(...))`.")
    if f.index is not None:
        return (f"indexing {arr} with {_INDEX[f.index]} on dim {d}, which is sharded over "
                f"{axes}, keeps a length of that dim that does not divide by the axes' size. "
                f"{jax}. Fix: `reshard` {axes} off that dim first, or slice a multiple of the "
                f"axes' size.")
    op = fmt_op(f.op)
    if f.check == "gather":  # take_along_axis, and the losses built on it
        also = (" or a loss that reduces over that dim instead of picking one entry "
                "(`optax.softmax_cross_entropy` with one-hot labels)"
                if f.op.startswith("optax.") else "")
        return (f"`{op}` gathers along dim {d} of {arr} (`take_along_axis`), which is sharded "
                f"over {axes}. {jax}. Fix: `reshard(x, {unsharded})` first{also}.")
    if f.check == "unspecified-axis":
        return (f"`{op}` without `axis=` runs over the flattened {arr}, whose dim {d} is sharded "
                f"over {axes}. {jax}. Fix: pass `axis=`, or `reshard(x, P())` first.")
    if f.check == "slice":  # roll: JAX 0.12 rejects any shift along a sharded dim
        jax = jax[:-1] + '; JAX 0.12: "`a` cannot be sharded on the axis being rolled over")'
        return (f"`{op}` along dim {d} of {arr}, which is sharded over {axes}, cuts that dim "
                f"at a shift that does not divide by the axes' size. {jax}. Fix: `reshard(x, "
                f"{unsharded})` first (JAX 0.12 requires it for any shift), or shift by a "
                f"multiple of the axes' size.")
    if f.check in ("pad", "dynamic_slice"):
        return (f"`{op}` makes dim {d} of {arr}, which is sharded over {axes}, {f.size} long, "
                f"which does not divide by the axes' size. {jax}. Fix: pad or slice to a "
                f"multiple of the axes' size, shard another dim, or `reshard(x, {unsharded})` "
                f"first.")
    if f.check == "scan":
        return (f"`jax.lax.scan` steps along dim 0 of the `xs` leaf {arr}, which is sharded over "
                f"{axes}. JAX raises ValueError (\"0th dimension of all xs should be "
                f"replicated\"). Fix: shard another dim (the batch, not time), or "
                f"`reshard(xs, {unsharded})` first.")
    if f.check in ("factorization", "symmetrize", "triangular_solve"):
        return (f"`{op}` factorises matrices whose dim {d} is sharded over {axes} ({arr}). "
                f"{jax}. Fix: `reshard` so only the batch dims are sharded (e.g. "
                f"`reshard(x, {unsharded})`).")
    return (f"`{op}` runs along dim {d} of {arr}, which is sharded over {axes}. {jax}. Fix: "
            f"`reshard` so that dim is unsharded first (e.g. `reshard(x, {unsharded})`).")
