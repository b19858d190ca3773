from .. import facts
from ..ftypes import WARNING, Invalid, Valid
from ..rule import ShardRule

_MESH = """
mesh = jax.make_mesh((8,), ("data",))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.arange(8.0), P("data"))
"""


class InvariantReduction(ShardRule):
    """
    ## What it does
    Warns about a `psum` (or `pmean`) inside `shard_map` whose operand is already the same
    on every device along the axis, for a reason shardcheck can name: it is the result
    of an earlier reduction over that axis (a helper that already returns a `psum`), or
    the gradient with respect to a shard_map input that its `in_specs` entry replicates
    over the axis. (A `psum` of a replicated input itself is not reported: code may
    psum inputs whose devices physically hold different data.)

    ## Why is this bad?
    Nothing fails; the numbers are wrong. `psum` adds the value from each device: of an
    invariant value that is the axis size times the value (`psum(psum(x))` is `n`
    times the total). With `check_vma=True` (the default of `jax.shard_map`) JAX already
    sums the gradient of a replicated input over the devices when differentiating (the
    transpose of its implicit broadcast), so the old data-parallel idiom
    `pmean(grad(loss)(w, x), axis)` returns the *sum* of the per-shard gradients, not
    their mean, and `psum` of it multiplies the sum once more. Code written for
    `check_rep` / `check_vma=False`, where such gradients were per-shard, computes
    `n` times the intended values. (`pmean` of other invariant values is harmless and not
    reported; neither is `psum(1, axis)`, the axis size.)

    ## Example
    ```python
    def local_total(xb):
        return jax.lax.psum(xb.sum(), "data")
    def body(xb):
        return jax.lax.psum(local_total(xb), "data")   # 8x the total on 8 devices
    ```

    Use instead:
    ```python
    def body(xb):
        return local_total(xb)                          # reduce once
    # gradients of replicated inputs under check_vma: divide the (summed) gradient by
    # jax.lax.axis_size("data") for the mean, or differentiate w.r.t. a varying copy,
    # jax.lax.pcast(w, "data", to="varying"), and keep the pmean
    ```
    """

    CODE = "SC208"
    NAME = "invariant-reduction"
    SEVERITY = WARNING
    JAX_FACTS = ("shard_map_check_vma_default",)
    VALID = [
        Valid("""import jax
import jax.numpy as jnp
from jax import P

def local_total(xb):
    return jax.lax.psum(xb.sum(), "data")

def body(xb):
    return local_total(xb) / jax.lax.psum(1, "data")
""" + _MESH + """    y = jax.shard_map(body, in_specs=P("data"), out_specs=P())(x)
"""),
        Valid("""import jax
import jax.numpy as jnp
from jax import P

def loss(w, xb):
    return jnp.sum(xb * w)

def body(w, xb):
    g = jax.grad(loss)(jax.lax.pcast(w, "data", to="varying"), xb)
    return jax.lax.pmean(g, "data")
""" + _MESH + """    w = jax.device_put(jnp.ones(()), P())
    g = jax.shard_map(body, in_specs=(P(), P("data")), out_specs=P())(w, x)
    assert float(g) == 3.5, float(g)
"""),
        Valid("""import jax
import jax.numpy as jnp
from jax import P

def loss(w, xb):
    return jnp.sum(xb * w)

def body(w, xb):
    g = jax.grad(loss)(w, xb)
    return jax.lax.pmean(g, "data") + jax.lax.pmean(w, "data")
""" + _MESH + """    w = jax.device_put(jnp.ones(()), P())
    g = jax.shard_map(body, in_specs=(P(), P("data")), out_specs=P(), check_vma=False)(w, x)
    assert float(g) == 4.5, float(g)
"""),
    ]
    INVALID = [
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def local_total(xb):
    return jax.lax.psum(xb.sum(), "data")

def body(xb):
    return jax.lax.psum(local_total(xb), "data")
""" + _MESH + """    y = jax.shard_map(body, in_specs=P("data"), out_specs=P())(x)
""", line=9, message="8 times", jax_outcome="wrong-result",
                witness="assert float(y) == 28.0, float(y)"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def loss(w, xb):
    return jnp.sum(xb * w)

def body(w, xb):
    g = jax.grad(loss)(w, xb)
    return jax.lax.pmean(g, "data")
""" + _MESH + """    w = jax.device_put(jnp.ones(()), P())
    g = jax.shard_map(body, in_specs=(P(), P("data")), out_specs=P())(w, x)
""", line=10, message="the sum of the per-shard gradients", jax_outcome="wrong-result",
                witness="assert float(g) == 3.5, float(g)  # the mean of the shards' gradients"),
    ]

    def check(self, ctx):
        for node, fact in ctx.facts(facts.InvariantReduction):
            yield self._finding(fact, node)

    def _finding(self, fact, node):
        axes = ", ".join(repr(a) for a in fact.axes)
        n = str(fact.axis_size) if fact.axis_size is not None else "the axis size"
        leaf = "".join(f"[{k!r}]" for k in fact.path)
        what = f"`{fact.api}` over {axes} of a value{f' (leaf {leaf})' if leaf else ''}"
        if fact.origin == "reduced":
            why = (f"that is already invariant over {axes}: it is the result of an earlier "
                   "reduction (noted)")
            fix = "Reduce once: drop this reduction or the earlier one"
        else:
            why = (f"that is the gradient with respect to an input replicated over {axes}: "
                   f"with check_vma=True JAX has already summed it over {axes}")
            fix = (f"For the mean, divide the gradient by {n} instead "
                   f"(`jax.lax.axis_size(...)`); or differentiate with respect to a varying copy "
                   f"(`jax.lax.pcast(w, {fact.axes!r}, to='varying')`) and keep the {fact.api}")
        if fact.api == "psum":
            result = f"it adds the {n} identical copies: the result is {n} times too large"
        else:
            result = (f"pmean of an invariant value changes nothing, so this is the sum of the "
                      f"per-shard gradients, {n} times their mean")
        return self.report(
            node,
            f"{what} {why}. No error is raised, but {result}. {fix}.",
            related=[(fact.origin_node, f"already reduced over {axes} here"
                      if fact.origin == "reduced" else "the gradient is taken here")])
