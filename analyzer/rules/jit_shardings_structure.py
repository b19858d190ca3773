from typing import Any, Optional, Tuple

from ..facts import JitKeywordArguments, JitShardingsNotPrefix
from ..ftypes import Invalid, Valid
from ..rule import ShardRule
from ..jaxapi.pytrees import PyTreeNodeVal
from ..values import ArrayVal, DictVal, PytreeNodeVal, TupleVal, Value

_HEAD = """import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("x", "y"))
s = NamedSharding(mesh, P("x"))
"""

_NOT_PREFIX = ("pjit in_shardings specification must be a tree prefix of the positional "
               "arguments tuple")


class JitShardingsStructure(ShardRule):
    """
    ## What it does
    Flags `jax.jit(in_shardings=...)` whose tree is not a prefix of the positional
    arguments of a call, `out_shardings=` whose tree is not a prefix of the function's
    outputs, and a call with keyword arguments of a function jitted with `in_shardings=`.

    ## Why is this bad?
    `in_shardings` is one sharding for all arguments, or a tuple (a list is read alike)
    with one entry per positional argument, each a prefix of that argument's tree. Static
    arguments (`static_argnums`, `static_argnames`) take no entry. JAX raises
    `ValueError: pjit in_shardings specification must be a tree prefix of the positional
    arguments tuple` when the number of entries is wrong (an entry for a static
    argument, or a list of shardings meant for one argument that is itself a list), and
    `ValueError: ... pytree structure error: different ... at key path pjit in_shardings`
    when an entry's structure differs from its argument's (a dict with other keys, a
    tuple for an array). `out_shardings` is matched against the outputs alike (`pjit
    out_shardings`), and there a list is not a tuple. With `in_shardings` set, JAX
    accepts no keyword arguments at all: `ValueError: pjit does not support kwargs when
    in_shardings is specified`, a static one passed by name included.

    A sharding whose spec is longer than an argument's rank is `spec-rank-mismatch`
    (SC103); the structure is checked where the source writes the containers out (a
    literal, or a name bound once to one and never changed in place).

    ## Example
    ```python
    f = jax.jit(scale, static_argnums=1, in_shardings=(s, s))
    f(x, 3)
    g = jax.jit(lambda a: (a, 2 * a), out_shardings=[s, s])
    ```

    Use instead:
    ```python
    f = jax.jit(scale, static_argnums=1, in_shardings=(s,))
    g = jax.jit(lambda a: (a, 2 * a), out_shardings=(s, s))
    ```
    """

    CODE = "SC310"
    NAME = "jit-shardings-structure"
    JAX_FACTS = ("jit.in_shardings_not_prefix", "jit.shardings_structure",
                 "jit.kwargs_with_in_shardings")
    VALID = [Valid(_HEAD + """\
def scale(x, n):
    return x * n

f = jax.jit(scale, static_argnums=1, in_shardings=(s,))
y = f(jnp.ones((8,)), 3)
g = jax.jit(lambda ab: ab[0] + ab[1], in_shardings=([s, s],))
z = g([jnp.ones((8,)), jnp.ones((8,))])
h = jax.jit(lambda a: (a, 2 * a), out_shardings=(s, None))
u, v = h(jnp.ones((8,)))
k = jax.jit(lambda p: p["w"].sum() + p["b"].sum(), in_shardings=({"w": s, "b": None},))
w = k({"w": jnp.ones((8, 4)), "b": jnp.ones((4,))})
""")]
    INVALID = [
        Invalid(_HEAD + """\
def scale(x, n):
    return x * n

f = jax.jit(scale, static_argnums=1, in_shardings=(s, s))
y = f(jnp.ones((8,)), 3)
""", line=9, message="`n` is static", jax_error="must be a tree prefix"),
        Invalid(_HEAD + """\
g = jax.jit(lambda ab: ab[0] + ab[1], in_shardings=[s, s])
z = g([jnp.ones((8,)), jnp.ones((8,))])
""", line=6, message="in_shardings=([s1, s2],)", jax_error="must be a tree prefix"),
        Invalid(_HEAD + """\
h = jax.jit(lambda a: (a, 2 * a), out_shardings=[s, s])
u, v = h(jnp.ones((8,)))
""", line=6, message="returns a tuple of 2", jax_error="pytree structure error"),
        Invalid(_HEAD + """\
k = jax.jit(lambda p: p["w"].sum(), in_shardings=({"w": s, "bias": s},))
params = {"w": jnp.ones((8, 4)), "b": jnp.ones((8,))}
w = k(params)
""", line=6, message="keys 'b', 'w'", jax_error="pytree structure error"),
        Invalid(_HEAD + """\
add = jax.jit(lambda a, b: a + b, in_shardings=s)
y = add(jnp.ones((8,)), b=jnp.ones((8,)))
""", line=7, message="keyword argument", jax_error="does not support kwargs"),
    ]

    def check(self, ctx):
        for node, fact in ctx.facts(JitKeywordArguments):
            names = ", ".join(f"`{k}=`" for k in fact.keywords)
            yield self.report(
                node, f"this function is jitted with `in_shardings=` and called with keyword "
                f"argument{'s' if len(fact.keywords) > 1 else ''} {names}: JAX raises ValueError "
                "(\"pjit does not support kwargs when in_shardings is specified\"), a static "
                "argument passed by name included. Pass the arguments positionally (with "
                "static_argnums= for static ones), or drop in_shardings.")
        for node, fact in ctx.facts(JitShardingsNotPrefix):
            yield self.report(node, _message(fact))


def _message(f: JitShardingsNotPrefix) -> str:
    if f.which == "in_shardings" and not f.path:
        return _top_level(f)
    what = "argument" if f.which == "in_shardings" else "output"
    if f.written is not None:
        return (f"`out_shardings` is {_describe(f.declared)}, but the function returns "
                f"{_describe_written(f.written)}: JAX raises ValueError (pytree structure error at "
                "`pjit out_shardings`): out_shardings must be a tree prefix of the outputs, and "
                "a list is not a tuple. Give one entry per output in the same container, or "
                "one sharding for all outputs.")
    where = f" for the {what} `{f.shown}`" if f.shown else ""
    return (f"`{f.which}` gives {_describe(f.declared)}{where}, which is "
            f"{_describe(f.actual)}: JAX raises ValueError (pytree structure error at "
            f"`pjit {f.which}`): each entry must be a tree prefix of its {what}. Make the "
            "structures agree, or give one sharding for the whole subtree.")


def _top_level(f: JitShardingsNotPrefix) -> str:
    args = f.actual.items if isinstance(f.actual, TupleVal) else ()
    n = len(args)
    static = ""
    if f.static:
        shown = ", ".join(f"`{s}`" for s in f.static)
        static = (f" ({shown} {'is' if len(f.static) == 1 else 'are'} static: a static "
                  "argument takes no entry)")
    quote = f"JAX raises ValueError (\"{_NOT_PREFIX}\")"
    if isinstance(f.declared, DictVal):
        return (f"`in_shardings` is a dict, but it must be one sharding for all arguments or "
                f"a tuple with one entry per positional argument: {quote}. For one argument "
                "that is a dict, wrap it: `in_shardings=({...},)`.")
    m = len(f.declared.items) if isinstance(f.declared, TupleVal) else 0
    kind = "list" if isinstance(f.declared, TupleVal) and f.declared.is_list else "tuple"
    head = (f"`in_shardings` is a {kind} of {m} entr{'y' if m == 1 else 'ies'}, but the call "
            f"passes {n} positional argument{'' if n == 1 else 's'} to trace{static}: {quote}.")
    if n == 1 and isinstance(args[0], TupleVal) and len(args[0].items) == m:
        inner = "[s1, s2]" if args[0].is_list else "(s1, s2)"
        return (head + f" The {kind} reads as one entry per argument; for the one argument, "
                f"itself a {'list' if args[0].is_list else 'tuple'} of {m}, wrap it in a "
                f"tuple: `in_shardings=({inner},)`.")
    return head + " Give one entry per non-static positional argument."


def _describe(v: Value) -> str:
    if isinstance(v, TupleVal):
        n = len(v.items)
        return f"a {'list' if v.is_list else 'tuple'} of {n}"
    if isinstance(v, DictVal):
        return "a dict with keys " + ", ".join(repr(k) for k in sorted(map(str, (k for k, _ in v.items))))
    if isinstance(v, ArrayVal):
        return "an array"
    if isinstance(v, PytreeNodeVal):
        return f"a tree of shardings in an `{v.kind}`"
    if isinstance(v, PyTreeNodeVal):
        return f"a `{v.short}`"
    return "a sharding"


def _describe_written(w: Optional[Tuple[Any, ...]]) -> str:
    if not w:
        return "something else"
    if w[0] == "dict":
        return "a dict with keys " + ", ".join(repr(k) for k in sorted(map(str, w[1])))
    return f"a {w[0]} of {w[1]}"
