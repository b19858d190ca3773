import libcst as cst

from ..ftypes import Invalid, Valid
from ..rule import ShardRule
from ..values import ArrayVal, FuncVal, PartialVal, SpecVal, TupleVal
from ._where import spec_entry_node


class ShardMapArityMismatch(ShardRule):
    """
    ## What it does
    Flags a `shard_map` whose `in_specs` tuple has a different length than the mapped
    function's positional parameters (or than the arguments it is called with), whose
    `out_specs` tuple has a different length than the tuple the function returns, or
    whose `in_specs` / `out_specs` is a list where the arguments or results are a tuple
    (or the other way round). It points at the spec entry to delete, or at the
    `in_specs=` / `out_specs=` argument, and notes the function or its `return`.

    ## Why is this bad?
    `in_specs` and `out_specs` are pytree prefixes of the arguments and the results.
    JAX raises `ValueError: pytree structure error: different lengths of tuple at key
    path shard_map in_specs`, or `... different types at key path shard_map in_specs`
    for a list: the positional arguments always form a tuple, so `in_specs=[P(), P()]`
    fails even for the right count. A single `P(...)` (not in a tuple) is a prefix of
    anything and applies to every argument or output: that is fine.

    ## Example
    ```python
    def body(x, w):
        return x @ w, x
    f = jax.shard_map(body, in_specs=(P("data"), P(), P()), out_specs=(P("data"),))
    ```

    Use instead:
    ```python
    f = jax.shard_map(body, in_specs=(P("data"), P()), out_specs=(P("data"), P("data")))
    ```
    """

    CODE = "SC203"
    NAME = "shard-map-arity-mismatch"
    JAX_FACTS = ("shard_map.spec_arity", "shard_map.specs_list_not_tuple")
    VALID = [Valid("""import jax
import jax.numpy as jnp
from jax import P

def body(x, w):
    return x * w, x

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8,)), P("data"))
    y, z = jax.shard_map(body, in_specs=P("data"), out_specs=(P("data"), P("data")))(x, x)
"""), Valid("""import jax
import jax.numpy as jnp
from jax import P

def body(x, w):
    return [x * w, x]

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8,)), P("data"))
    y, z = jax.shard_map(body, in_specs=(P("data"), P("data")),
                         out_specs=[P("data"), P("data")])(x, x)
""")]
    INVALID = [
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def body(x):
    return x * 2

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8,)), P("data"))
    y = jax.shard_map(body, in_specs=(P("data"), P()), out_specs=P("data"))(x)
""", line=11, message="in_specs has 2", jax_error="different lengths"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def body(x, w):
    return x * w, x, w

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8,)), P("data"))
    y = jax.shard_map(body, in_specs=(P("data"), P("data")), out_specs=(P("data"), P("data")))(x, x)
""", line=11, message="returns 3", jax_error="different lengths"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def body(x, w):
    return x * w

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8,)), P("data"))
    y = jax.shard_map(body, in_specs=[P("data"), P("data")], out_specs=P("data"))(x, x)
""", line=11, message="list", jax_error="different types"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def body(x):
    return x, 2 * x

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8,)), P("data"))
    y = jax.shard_map(body, in_specs=P("data"), out_specs=[P("data"), P("data")])(x)
""", line=11, message="Make out_specs a tuple", jax_error="different types"),
    ]

    def check(self, ctx):
        for sm in ctx.events.shard_maps:
            func, bound_args = sm.func, 0
            if isinstance(func, PartialVal):
                bound_args = len(func.args)
                func = func.func
            if isinstance(sm.in_specs, TupleVal) and sm.in_specs.is_list:
                yield self._list_in_specs(sm)
            elif isinstance(func, FuncVal) and isinstance(func.node, (cst.FunctionDef, cst.Lambda)):
                yield from self._check_in(sm, func, func.node.params, bound_args)
            yield from self._check_out(sm)

    def _list_in_specs(self, sm):
        n = len(sm.in_specs.items)
        return self.report(
            spec_entry_node(sm, None, "in_specs"),
            f"in_specs is a list of {n}, but JAX matches in_specs against the *tuple* of "
            "positional arguments: it raises ValueError (pytree structure error: different "
            "types at key path shard_map in_specs: list vs tuple). Write the specs as a "
            f"tuple: in_specs=({', '.join(_describe(v) for v in sm.in_specs.items)}"
            f"{',' if n == 1 else ''}).")

    def _check_in(self, sm, func, params, bound_args):
        specs = sm.in_specs
        if not isinstance(specs, TupleVal):
            return
        n = len(specs.items)
        if sm.call_args is not None:
            if n != len(sm.call_args):
                yield self.report(
                    _entry(sm, specs, len(sm.call_args), "in_specs"),
                    f"in_specs has {n} entries but the shard_map is called with "
                    f"{len(sm.call_args)} arguments. JAX raises ValueError (pytree structure "
                    "error: different lengths of tuple at shard_map in_specs). Give one spec per "
                    "argument, or a single P(...) for all of them.",
                    related=[(func.node, f"`{func.name}` is defined here")])
            return
        if isinstance(params.star_arg, cst.Param):
            return
        positional = list(params.posonly_params) + list(params.params)
        total = len(positional) - bound_args
        required = sum(1 for p in positional if p.default is None) - bound_args
        if n > total or n < required:
            takes = str(required) if required == total else f"{required} to {total}"
            yield self.report(
                _entry(sm, specs, total, "in_specs"),
                f"in_specs has {n} entries but `{func.name}` takes {takes} "
                "positional arguments. JAX raises ValueError (pytree structure error: different "
                "lengths of tuple at shard_map in_specs) or the call fails. Give one spec per "
                "argument.",
                related=[(func.node, f"`{func.name}` is defined here")])

    def _check_out(self, sm):
        specs = sm.out_specs
        if not isinstance(specs, TupleVal) or not sm.returns:
            return
        n = len(specs.items)
        shapes: set = set()
        for _, v in sm.returns:
            if isinstance(v, TupleVal):
                shapes.add(("list" if v.is_list else "tuple", len(v.items)))
            elif isinstance(v, ArrayVal):
                shapes.add(("array", 1))
            else:
                return
        if len(shapes) != 1:
            return
        ((kind, got),) = shapes
        spec_kind = "list" if specs.is_list else "tuple"
        if kind == spec_kind and got == n:
            return
        if kind == "array":
            what = "a single array"
        elif kind != spec_kind:
            what = f"a {kind} of {got}"
        else:
            what = f"{got} values"
        if kind != "array" and kind != spec_kind and got == n:
            fix = f"Make out_specs a {kind} as well"
        else:
            fix = "Give one spec per returned value, or a single P(...) for all of them"
        yield self.report(
            _entry(sm, specs, got if kind != "array" else n, "out_specs") if kind == spec_kind
            else spec_entry_node(sm, None, "out_specs"),
            f"out_specs is a {spec_kind} of {n} but the mapped function returns {what}. JAX "
            "raises ValueError (pytree structure error at shard_map out_specs). "
            f"{fix}.", related=[(r, f"the mapped function returns {what} here")
                                for r, _ in sm.returns])


def _entry(sm, specs, expected: int, keyword: str):
    """The first entry beyond the ``expected`` count when there are too many (that entry
    is the one to delete), else the whole ``keyword=`` argument."""
    if len(specs.items) > expected:
        extra = specs.items[expected]
        if isinstance(extra, SpecVal):
            return spec_entry_node(sm, extra, keyword)
    return spec_entry_node(sm, None, keyword)


def _describe(v) -> str:
    return v.describe() if isinstance(v, SpecVal) else "..."
