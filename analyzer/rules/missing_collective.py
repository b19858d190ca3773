import libcst as cst

from .. import facts

from ..ftypes import Invalid, Valid
from ..rule import ShardRule
from ..values import ArrayVal, SpecVal, TupleVal
from ._where import spec_entry_node


class MissingCollective(ShardRule):
    """
    ## What it does
    Flags a `shard_map` whose `out_specs` claims an output is replicated over a mesh axis
    (by not naming it) while the value the function returns still varies over that
    axis: no `psum` / `pmean` / `pmax` / `pmin` reduced it. shardcheck infers the varying
    axes as JAX types them (`{V:...}`): each argument varies over the manual axes its
    `in_specs` entry names; elementwise ops, matmuls and local reductions combine their
    operands' sets; `psum(x, "model")` removes `"model"`; `axis_index("model")` varies
    over `"model"`; `all_gather` keeps the operand's axes unless `to='invarying'`; a
    random key split or folded with `axis_index` varies like it. Where it cannot tell,
    it stays silent. The finding points at the `out_specs` entry and notes the
    `return`s of the varying value.

    ## Why is this bad?
    Each device holds a different partial result. With `check_vma=True` (the default
    of `jax.shard_map`) JAX raises `ValueError: shard_map ... was given
    out_specs which require replication which can't be statically inferred`. With
    `check_vma=False` JAX stays silent and returns one device's partial value as if it
    were the whole result: the numbers are wrong. Two cases surprise code written before
    `check_vma`: `all_gather(x, axis, tiled=True)` gives every device the same array, yet
    its type still varies over `axis` (pass `to='invarying'`); and a per-shard random key
    (`fold_in(key, axis_index(axis))`) returned with `P()`.

    ## Example
    ```python
    def matmul(x_block, w_block):
        return x_block @ w_block          # a partial sum over 'model'
    y = jax.shard_map(matmul, in_specs=(P("data", "model"), P("model", None)),
                      out_specs=P("data", None))(x, w)
    ```

    Use instead:
    ```python
    def matmul(x_block, w_block):
        return jax.lax.psum(x_block @ w_block, "model")
    # or keep it sharded: out_specs=P("data", "model") with jax.lax.psum_scatter
    ```
    """

    CODE = "SC201"
    NAME = "missing-collective"
    JAX_FACTS = ("shard_map.replication_not_inferred", "shard_map_check_vma_default")
    VALID = [Valid("""import jax
import jax.numpy as jnp
from jax import P

def matmul(xb, wb):
    return jax.lax.psum(xb @ wb, "model")

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8, 16)), P("data", "model"))
    w = jax.device_put(jnp.ones((16, 4)), P("model", None))
    y = jax.jit(jax.shard_map(matmul, in_specs=(P("data", "model"), P("model", None)),
                              out_specs=P("data", None)))(x, w)
"""), Valid("""import jax
import jax.numpy as jnp
from jax import P

def gather(xb):
    return jax.lax.all_gather(xb, "data", tiled=True, to="invarying")

def shard_noise(key, xb):
    k = jax.random.fold_in(key, jax.lax.axis_index("data"))
    return xb + jax.random.normal(k, xb.shape)

mesh = jax.make_mesh((8,), ("data",))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.arange(8.0), P("data"))
    y = jax.shard_map(gather, in_specs=P("data"), out_specs=P())(x)
    z = jax.shard_map(shard_noise, in_specs=(P(), P("data")), out_specs=P("data"))(
        jax.random.key(0), x)
""")]
    INVALID = [
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def matmul(xb, wb):
    return xb @ wb

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8, 16)), P("data", "model"))
    w = jax.device_put(jnp.ones((16, 4)), P("model", None))
    y = jax.jit(jax.shard_map(matmul, in_specs=(P("data", "model"), P("model", None)),
                              out_specs=P("data", None)))(x, w)
""", line=13, message="varies over 'model'", jax_error="require replication"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def loss_and_grads(w, xb):
    loss, grads = jax.value_and_grad(lambda w: jnp.sum((xb @ w) ** 2))(w)
    return loss, grads  # grads come back summed (w is replicated); loss does not

mesh = jax.make_mesh((8,), ("data",))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((32, 4)), P("data", None))
    loss, grads = jax.shard_map(loss_and_grads, in_specs=(P(), P("data", None)),
                                out_specs=(P(), P()))(jnp.ones(4), x)
""", line=13, message="psum(loss, 'data')", jax_error="require replication"),
        Invalid("""import jax
import jax.numpy as jnp
import numpy as np
from jax import P

def total(xb):
    return jnp.sum(xb, keepdims=True)

mesh = jax.make_mesh((8,), ("data",))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.arange(8.0), P("data"))
    y = jax.shard_map(total, in_specs=P("data"), out_specs=P(), check_vma=False)(x)
""", line=12, message="check_vma=False", jax_outcome="wrong-result",
                witness="assert float(y[0]) == float(np.arange(8.0).sum()), float(y[0])"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def gather(xb):
    return jax.lax.all_gather(xb, "data", tiled=True)

mesh = jax.make_mesh((8,), ("data",))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.arange(8.0), P("data"))
    y = jax.shard_map(gather, in_specs=P("data"), out_specs=P())(x)
""", line=11, message="to='invarying'", jax_error="require replication"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def shard_key(key):
    return jax.random.fold_in(key, jax.lax.axis_index("data"))

mesh = jax.make_mesh((8,), ("data",))
with jax.set_mesh(mesh):
    keys = jax.shard_map(shard_key, in_specs=P(), out_specs=P())(jax.random.key(0))
""", line=10, message="random key", jax_error="require replication"),
    ]

    def check(self, ctx):
        for sm in ctx.events.shard_maps:
            manual = sm.manual_axes if not sm.axis_names_unknown else None
            if manual is None or not sm.returns or sm.mesh is None:
                continue
            # one finding per out_specs entry and axes, at the entry, noting each return
            claims: dict = {}
            for ret_node, value in sm.returns:
                for index, out_value, spec in _pairs(value, sm.out_specs):
                    if not isinstance(out_value, ArrayVal) or out_value.varying is None:
                        continue
                    named = set(spec.axis_names()) | {a for a in spec.unreduced + spec.reduced if a}
                    missing = tuple(sorted((out_value.varying & manual) - named))
                    if missing:
                        claims.setdefault((index, spec, missing), []).append(
                            (ret_node, index, out_value))
            gathers = {id(f.value): node for node, f in ctx.facts(facts.VaryingGather)}
            for (_, spec, missing), returns in claims.items():
                finding = self._finding(ctx, sm, spec, missing, returns, gathers)
                if finding is not None:
                    yield finding

    def _finding(self, ctx, sm, spec, missing, returns, gathers):
        axes = ", ".join(repr(a) for a in missing)
        first = missing[0]
        values = [v for _, _, v in returns]
        gather = next((gathers[id(v)] for v in values if id(v) in gathers), None)
        if sm.check_vma is False:
            what = ("With check_vma=False JAX does not check this and silently "
                    "returns one device's partial value as the whole result")
        else:
            what = ("JAX raises ValueError at trace time (out_specs require "
                    "replication which can't be statically inferred)")
        is_key = any(isinstance(v, ArrayVal) and (v.dtype or "").startswith("key<") for v in values)
        if sm.check_vma is False and (gather is not None or is_key):
            return None  # unchecked, and no wrong number: every device holds the same array
        if gather is not None:
            why = ("it comes from `all_gather`, whose result JAX types as varying even "
                   "though every device holds the whole gathered array")
            fix = (f"Pass `to='invarying'` to the all_gather, or keep it sharded by naming "
                   f"{first!r} in out_specs")
        elif is_key:
            why = "it is a per-shard random key (derived from a varying key or axis_index)"
            fix = (f"Return the keys sharded (name {first!r} in out_specs), or derive the key "
                   "from a replicated one only")
        else:
            why = (f"nothing reduced it over {'that axis' if len(missing) == 1 else 'those axes'}")
            fix = (f"Reduce it with `jax.lax.psum({_code(ctx, *returns[0][:2])}, {first!r})` (or "
                   f"pmean/pmax), or keep it sharded by naming {first!r} in out_specs")
        return self.report(
            spec_entry_node(sm, spec, "out_specs"),
            f"`out_specs={spec.describe()}` claims this output is replicated over "
            f"{axes}, but the value returned varies over {axes}: {why}. {what}. {fix}.",
            related=[(r, f"the value returned here varies over {axes}") for r, _, _ in returns]
            + ([(gather, "gathered here")] if gather is not None else []))


def _pairs(value, specs):
    """(position in the returned tuple or None, returned array, its out_specs entry)
    triples; a single P applies to every output."""
    if isinstance(specs, SpecVal):
        if isinstance(value, TupleVal):
            return [(i, v, specs) for i, v in enumerate(value.items)]
        return [(None, value, specs)]
    if isinstance(specs, TupleVal) and isinstance(value, TupleVal) and len(specs.items) == len(value.items):
        return [(i, v, s) for i, (v, s) in enumerate(zip(value.items, specs.items))
                if isinstance(s, SpecVal)]
    return []


def _code(ctx, ret_node, index=None) -> str:
    """The returned expression's source (its ``index``-th element, for an output of a
    returned tuple written as one), when short enough to quote."""
    value = ret_node.value if isinstance(ret_node, cst.Return) else ret_node
    if index is not None:
        elements = value.elements if isinstance(value, cst.Tuple) else None
        if elements is None or index >= len(elements) or any(
                isinstance(e, cst.StarredElement) for e in elements):
            return "y"
        value = elements[index].value
    if value is None:
        return "y"
    text = ctx.model.module.code_for_node(value).strip()
    return text if len(text) <= 40 and "\n" not in text else "y"
