from .. import facts
from ..ftypes import Invalid, Valid
from ..rule import ShardRule
from ..values import ArrayVal, varying_of

_HEAD = """import jax
import jax.numpy as jnp
from jax import P

"""
_RUN = """
mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8, 4)), P("data"))
    y = jax.shard_map(body, in_specs=P("data"), out_specs=P("data"))(x)
"""


class ControlFlowTypeMismatch(ShardRule):
    """
    ## What it does
    Flags a `lax.scan` / `fori_loop` / `while_loop` whose carry changes type in one step,
    and `lax.cond` / `switch` branches that return different types, where the difference
    is in the sharding: inside a `shard_map` body, a carry that starts replicated over a
    manual axis and varies over it after one step (or the other way round), or a branch
    that returns a per-shard value beside a replicated default; under `jax.jit` on an
    Explicit mesh, a carry that starts unsharded (`jnp.zeros(shape)`) and comes back
    sharded, or branches sharded differently. The finding points at the initial carry,
    or at the branch with fewer axes; the loop body or the other branch is noted.

    ## Why is this bad?
    JAX requires a carry to keep its type and all branches to return equal types, and
    both the Explicit sharding (`float32[8@data]`) and, with `check_vma=True` (the
    default of `jax.shard_map`), the varying manual axes (`{V:data}`) are part of the
    type. Adding a sharded or per-shard value to `jnp.zeros(...)` changes it, so JAX
    raises `TypeError: scan body function carry input and carry output must have equal
    types` (`while_loop body function ...` for `while_loop`; `fori_loop` is a scan), or
    `TypeError: cond branches must have equal output types` (`switch branches ...`). The
    varying predicate of a `cond` does not matter: only the branches' outputs. Code
    written before `check_vma` or explicit sharding did not need this. (A dtype change
    of the carry is also an error in JAX, but not this rule's.)

    ## Example
    ```python
    def body(x):
        def step(c, xi):
            return c + xi, None
        c, _ = jax.lax.scan(step, jnp.zeros((4,)), x)   # float32[4] -> float32[4]{V:data}
        return c
    ```

    Use instead:
    ```python
        c, _ = jax.lax.scan(step, jnp.zeros_like(x[0]), x)   # varies like x
        # or: jax.lax.pcast(jnp.zeros((4,)), "data", to="varying")
        # under jit on an Explicit mesh: jnp.zeros_like(x), or jnp.zeros(shape, out_sharding=P("data"))
    ```
    """

    CODE = "SC205"
    NAME = "control-flow-type-mismatch"
    JAX_FACTS = ("scan.carry_types_differ", "while_loop.carry_types_differ",
                 "cond.branch_types_differ", "shard_map_check_vma_default")
    VALID = [
        Valid(_HEAD + """def body(x):
    def step(c, xi):
        return c + xi, None
    c, _ = jax.lax.scan(step, jnp.zeros_like(x[0]), x)
    return c
""" + _RUN),
        Valid(_HEAD + """def body(x):
    zero = jax.lax.pcast(jnp.zeros((4,)), "data", to="varying")
    return jax.lax.fori_loop(0, 4, lambda i, c: c + x[i], zero)
""" + _RUN),
        Valid(_HEAD + """def body(x):
    return jax.lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: jnp.zeros_like(v), x)
""" + _RUN),
        Valid(_HEAD + """@jax.jit
def total(x):
    return jax.lax.fori_loop(0, 3, lambda i, c: c + x, jnp.zeros((8, 4), out_sharding=P("data")))

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    y = total(jax.device_put(jnp.ones((8, 4)), P("data")))
"""),
        Valid(_HEAD + """def body(x):
    def step(c, xi):
        return c + xi, None
    c, _ = jax.lax.scan(step, jnp.zeros((4,)), x)
    return c

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8, 4)), P("data"))
    y = jax.shard_map(body, in_specs=P("data"), out_specs=P("data"), check_vma=False)(x)
"""),
    ]
    INVALID = [
        Invalid(_HEAD + """def body(x):
    def step(c, xi):
        return c + xi, None
    c, _ = jax.lax.scan(step, jnp.zeros((4,)), x)
    return c
""" + _RUN, line=8, message="starts replicated over 'data'",
                jax_error="scan body function carry input and carry output must have equal types"),
        Invalid(_HEAD + """def body(x):
    return jax.lax.fori_loop(0, 4, lambda i, c: c + x[i], jnp.zeros((4,)))
""" + _RUN, line=6, message="fori_loop",
                jax_error="carry input and carry output must have equal types"),
        Invalid(_HEAD + """def body(x):
    def step(carry):
        i, total = carry
        return i + 1, total + x[i]
    return jax.lax.while_loop(lambda c: c[0] < 4, step, (0, jnp.zeros((4,))))[1]
""" + _RUN, line=9, message="carry[1]",
                jax_error="while_loop body function carry input and carry output must have equal"),
        Invalid(_HEAD + """def body(x):
    return jax.lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: jnp.zeros((4,)), x)
""" + _RUN, line=6, message="false_fun returns a value replicated over 'data'",
                jax_error="cond branches must have equal output types"),
        Invalid(_HEAD + """def double(v):
    return v * 2

def body(x):
    return jax.lax.switch(0, [double, lambda v: jnp.ones((4,))], x)
""" + _RUN, line=9, message="branch 1",
                jax_error="switch branches must have equal output types"),
        Invalid(_HEAD + """@jax.jit
def total(x):
    return jax.lax.fori_loop(0, 3, lambda i, c: c + x, jnp.zeros((8, 4)))

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    y = total(jax.device_put(jnp.ones((8, 4)), P("data")))
""", line=7, message="float32[8@data,4]",
                jax_error="carry input and carry output must have equal types"),
        Invalid(_HEAD + """mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8,)), P("data"))
    y = jax.lax.cond(x.sum() > 0, lambda: x * 2, lambda: jnp.zeros((8,)))
""", line=8, message="false_fun returns `float32[8]`",
                jax_error="cond branches must have equal output types"),
    ]

    def check(self, ctx):
        for node, fact in ctx.facts(facts.ControlFlowTypeMismatch):
            if fact.part == "carry":
                yield self._carry(fact, node)
            else:
                yield self._branch(fact, node)

    def _carry(self, fact, node):
        what = "the carry" + (f" (carry{_path(fact.path)})" if fact.path else "")
        jax_says = ("while_loop body function" if fact.api == "while_loop" else
                    "scan body function") + " carry input and carry output must have equal types"
        if fact.what == "sharding":
            state = f"starts as {_type(fact.here)} but the body returns {_type(fact.there)}"
            fix = (f"Give the initial carry the body's sharding: build it from an input "
                   f"(`jnp.zeros_like(...)`), pass `out_sharding={_spec(fact.there.dims)}` "
                   "to its constructor, or `jax.sharding.reshard` it")
        else:
            before, after = _varying(fact.here, fact.manual), _varying(fact.there, fact.manual)
            gained, lost = sorted(after - before), sorted(before - after)
            if gained:
                axes = _axes(gained)
                state = f"starts replicated over {axes} but the body returns it varying over {axes}"
                fix = (f"Make the initial carry vary as well: build it from a per-shard value "
                       f"(`jnp.zeros_like(...)` of an input), or `jax.lax.pcast(init, "
                       f"{_tuple(gained)}, to='varying')`")
            else:
                axes = _axes(lost)
                state = f"starts varying over {axes} but the body returns it replicated over {axes}"
                fix = (f"Keep the body's carry varying (`jax.lax.pcast(..., {_tuple(lost)}, "
                       "to='varying')` after the reduction), or reduce after the loop")
        where = " inside shard_map" if fact.what == "varying" else ""
        part = ("the varying manual axes are" if fact.what == "varying" else
                "its sharding is")
        return self.report(
            node,
            f"In this `lax.{fact.api}`{where}, {what} {state}: {part} part of its type, so "
            f"JAX raises TypeError ({jax_says}). {fix}.",
            related=[(fact.other, "the loop body")])

    def _branch(self, fact, node):
        out = "a value" if not fact.path else f"output{_path(fact.path)}"
        jax_says = f"{fact.api} branches must have equal output types"
        if fact.what == "sharding":
            return self.report(
                node,
                f"`lax.{fact.api}`'s {fact.part} returns {_type(fact.here)} but "
                f"{fact.other_name} returns {_type(fact.there)}: the sharding is part of the "
                f"type, and JAX raises TypeError ({jax_says}). Give {fact.part}'s "
                f"{'output' if not fact.path else out} the "
                f"same sharding: build it from the operand (`jnp.zeros_like(v)`), pass "
                f"`out_sharding={_spec(fact.there.dims)}`, or `jax.sharding.reshard` it.",
                related=[(fact.other, f"{fact.other_name} returns {_type(fact.there)}")])
        gained = sorted(_varying(fact.there, fact.manual) - _varying(fact.here, fact.manual))
        axes = _axes(gained)
        return self.report(
            node,
            f"`lax.{fact.api}`'s {fact.part} returns {out} replicated over {axes}, but "
            f"{fact.other_name} returns one that varies over {axes}: inside shard_map the "
            f"varying manual axes are part of the type, and JAX raises TypeError ({jax_says}). "
            f"Make {fact.part}'s output vary as well: build it from the operand "
            f"(`jnp.zeros_like(v)`), or `jax.lax.pcast(..., {_tuple(gained)}, to='varying')`.",
            related=[(fact.other, f"{fact.other_name} varies over {axes}")])


def _varying(v, manual) -> frozenset:
    return (varying_of(v) or frozenset()) & manual


def _type(v) -> str:
    t = v.sharding_type() if isinstance(v, ArrayVal) else None
    if t is not None:
        return f"`{t}`"
    dims = ",".join("@".join(("?",) + d) if d else "?" for d in v.dims)
    return f"`?[{dims}]`"


def _spec(dims) -> str:
    parts = ["None" if not d else repr(d[0]) if len(d) == 1 else repr(d) for d in dims]
    while parts and parts[-1] == "None":
        parts.pop()
    return "P(" + ", ".join(parts) + ")"


def _path(path) -> str:
    return "".join(f"[{k!r}]" for k in path)


def _axes(names) -> str:
    return ", ".join(repr(a) for a in names)


def _tuple(names) -> str:
    return "(" + ", ".join(repr(a) for a in names) + ("," if len(names) == 1 else "") + ")"
