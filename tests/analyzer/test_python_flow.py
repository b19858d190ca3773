"""``check`` follows the Python real code is written in: comprehensions, loops over
``enumerate``/``zip``/``range`` of known sequences (one run per item, up to a bound),
closures, lists filled by ``append``/``extend`` (unknown after a path that may not
run), ``dict.get`` of a key the dict holds, loops over a generator's items or an object's ``__iter__`` (each item the
join of what it yields), a shard_map a factory function builds and returns (its body's axes are
those the shard_map binds), a helper's ``if`` on an argument a call makes known (the value returned is
that of the branch Python runs), and names a function rebinds with ``global``/``nonlocal`` (unknown elsewhere,
never the value of their last assignment in view).

Each program runs under JAX too (``test_jax_agrees``); the line of each expected finding
is marked ``# <- CODE``."""

from __future__ import annotations


from marked_programs import case_tests


HEAD = """\
import functools
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
"""

NOT_IN_MESH = "not found in mesh"
NOT_DIVISIBLE = "evenly divide"

CASES = {
    "a_spec_built_by_append_over_the_names_it_is_given": ("""
RULES = {"batch": "data", "hidden": "model"}

def spec_for(names):
    axes = []
    for name in names:
        axes.append(RULES[name])
    return P(*axes)

def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    return jax.device_put(jnp.zeros((16, 6)), NamedSharding(mesh, spec_for(("batch", "hidden"))))  # <- SC104

main()
""", NOT_DIVISIBLE),
    "a_spec_extended_to_a_rank_too_high": ("""
def spec_for(rank):
    axes = ["data"]
    axes.extend([None] * (rank - 1))
    return P(*axes)

def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    return jax.device_put(jnp.zeros((16, 6)), NamedSharding(mesh, spec_for(3)))  # <- SC103

main()
""", "compat:spec.longer_than_rank"),
    "an_append_that_may_not_run_leaves_the_spec_unknown": ("""
import os

def spec_for():
    axes = ["data"]
    if os.environ.get("SHARD_HIDDEN_OVER_MODEL"):
        axes.append("model")
    else:
        axes.append(None)
    return P(*axes)

def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    return jax.device_put(jnp.zeros((16, 6)), NamedSharding(mesh, spec_for()))

main()
""", None),
    "a_logical_table_read_with_get": ("""
LOGICAL = {"batch": "data", "embed": None, "mlp": "model"}

def logical_to_spec(names):
    return P(*[LOGICAL.get(n) for n in names])

def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    w = jnp.zeros((8, 6))
    return jax.device_put(w, NamedSharding(mesh, logical_to_spec(("embed", "mlp"))))  # <- SC104

main()
""", NOT_DIVISIBLE),
    "a_name_the_table_lacks_read_with_get_is_unknown": ("""
LOGICAL = {"batch": "data", "embed": None, "mlp": "model"}

def logical_to_spec(names):
    return P(*[LOGICAL.get(n) for n in names])

def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    w = jnp.zeros((8, 6))
    return jax.device_put(w, NamedSharding(mesh, logical_to_spec(("embed", "heads"))))

main()
""", None),
    "a_branch_these_arguments_never_run": ("""
def place(x, mesh, shard=False):
    if shard:
        return jax.device_put(x, NamedSharding(mesh, P("model")))  # 6 rows over model: 4
    return x

def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    return place(jnp.zeros((6,)), mesh)

main()
""", None),
    "the_same_branch_run": ("""
def place(x, mesh, shard=False):
    if shard:
        return jax.device_put(x, NamedSharding(mesh, P("model")))  # <- SC104
    return x

def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    return place(jnp.zeros((6,)), mesh, shard=True)

main()
""", NOT_DIVISIBLE),
    "a_list_comprehension": ("""
def place():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    specs = [P("data"), P("modle")]  # <- SC101
    return [jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, s)) for s in specs]

place()
""", NOT_IN_MESH),
    "a_dict_comprehension": ("""
def shardings():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    return {k: NamedSharding(mesh, P(k)) for k in ("data", "modle")}  # <- SC101

shardings()
""", NOT_IN_MESH),
    "a_helper_branching_on_its_argument": ("""
def spec_for(name):
    if name == "kernel":
        return P(None, "model")
    return P("model")

def place(params):
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    return {k: jax.device_put(v, NamedSharding(mesh, spec_for(k))) for k, v in params.items()}  # <- SC104

place({"kernel": jnp.zeros((16, 32)), "bias": jnp.zeros((30,))})
""", NOT_DIVISIBLE),
    "a_shard_map_a_factory_returns": ("""
def make_reduce(mesh, axis):
    def kernel(x):
        return jax.lax.psum(x.sum(0, keepdims=True), axis)  # <- SC202
    return jax.shard_map(kernel, mesh=mesh, in_specs=P("data", "model"), out_specs=P(None, "model"))

def main():
    mesh = jax.make_mesh((4, 2), ("data", "model"))
    reduce = jax.jit(make_reduce(mesh, "batch"))
    return reduce(jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("data", "model"))))

main()
""", ""),  # JAX 0.10.2 raises a bare AssertionError: the axis is in no mesh
    "enumerate_in_a_loop": ("""
def place():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    for i, n in enumerate([8, 6]):
        jax.device_put(jnp.zeros((n, 4)), NamedSharding(mesh, P("model")))  # <- SC104

place()
""", NOT_DIVISIBLE),
    "zip_in_a_loop": ("""
def place():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    for n, axis in zip([8, 8], ["data", "modle"]):
        jax.device_put(jnp.zeros((n, 4)), NamedSharding(mesh, P(axis)))  # <- SC101

place()
""", NOT_IN_MESH),
    "range_in_a_loop": ("""
def place():
    mesh = jax.make_mesh((8,), ("data",))
    for i in range(1, 3):
        jax.device_put(jnp.zeros((4 * i, 4)), NamedSharding(mesh, P("data")))  # <- SC104

place()
""", NOT_DIVISIBLE),
    "len_of_a_known_list": ("""
def place():
    mesh = jax.make_mesh((8,), ("data",))
    names = ["a", "b", "c"]
    return jax.device_put(jnp.zeros((len(names), 4)), NamedSharding(mesh, P("data")))  # <- SC104

place()
""", NOT_DIVISIBLE),
    "a_closure": ("""
def outer():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    def inner(x):
        return jax.device_put(x, NamedSharding(mesh, P("modle")))  # <- SC101
    return inner(jnp.zeros(8))

outer()
""", NOT_IN_MESH),
    "a_partial": ("""
def place(x, mesh, axis):
    return jax.device_put(x, NamedSharding(mesh, P(axis)))  # <- SC101

put = functools.partial(place, mesh=jax.make_mesh((2, 4), ("data", "model")), axis="modle")
put(jnp.zeros(8))
""", NOT_IN_MESH),
    # iterators: a generator function's call, an object's __iter__, yield from
    "a_loop_over_a_generator": ("""
def batches(mesh, n):
    for _ in range(2):
        yield jax.device_put(jnp.ones((n, 16)), NamedSharding(mesh, P("data", None)))

def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    w = jax.device_put(jnp.ones((16, 16)), NamedSharding(mesh, P(None, "model")))
    other = jax.make_mesh((8,), ("data",))
    for x in batches(other, 8):
        jnp.tanh(x @ w)  # <- SC105

main()
""", "Mesh for all inputs should be equal"),
    "a_loop_over_an_object_with_iter": ("""
class Loader:
    def __init__(self, mesh, size):
        self.sharding = NamedSharding(mesh, P("data"))
        self.size = size

    def __iter__(self):
        yield from self._batches()

    def _batches(self):
        for i in range(2):
            yield jax.device_put(jnp.zeros((self.size,)), self.sharding)

def main():
    for x in Loader(jax.make_mesh((8,), ("data",)), 8):
        rest = jnp.zeros((x.shape[0] - 2,))
        jax.device_put(rest, NamedSharding(jax.make_mesh((8,), ("data",)), P("data")))  # <- SC104

main()
""", NOT_DIVISIBLE),
    "a_generator_whose_helper_yields_too": ("""
def inner(mesh):
    yield jax.device_put(jnp.zeros((8,)), NamedSharding(mesh, P()))

def outer(mesh):
    list(inner(mesh))  # its items are not outer's (joined in, the shape would be unknown)
    yield jax.device_put(jnp.zeros((6,)), NamedSharding(mesh, P()))

def main():
    mesh = jax.make_mesh((8,), ("data",))
    for x in outer(mesh):
        jax.device_put(x, NamedSharding(mesh, P("data")))  # <- SC104

main()
""", NOT_DIVISIBLE),
    # a helper that returns from inside a loop over known items (sorted with a key), a
    # conditional expression whose test is known, and jnp.shape of an array
    "a_loop_that_returns_at_the_first_dim_a_test_picks": ("""
def fsdp_spec(shape):
    for dim in sorted(range(len(shape)), key=lambda d: -shape[d]):
        if shape[dim] > 1:
            return P(*[("data" if d == dim else None) for d in range(len(shape))])
    return P()

def main():
    mesh = jax.make_mesh((8,), ("data",))
    params = {"w": jnp.zeros((24, 64)), "b": jnp.zeros((10,)), "s": jnp.zeros((1,))}
    return {k: jax.device_put(v, NamedSharding(mesh, fsdp_spec(jnp.shape(v))))  # <- SC104
            for k, v in params.items()}

main()
""", NOT_DIVISIBLE),
    "a_loop_that_returns_the_spec_of_each_dim_that_divides": ("""
def fsdp_spec(shape):
    for dim in sorted(range(len(shape)), key=lambda d: -shape[d]):
        if shape[dim] % 8 == 0:
            return P(*[("data" if d == dim else None) for d in range(len(shape))])
    return P()

def main():
    mesh = jax.make_mesh((8,), ("data",))
    params = {"w": jnp.zeros((24, 64)), "b": jnp.zeros((10,)), "s": jnp.zeros((1,))}
    return {k: jax.device_put(v, NamedSharding(mesh, fsdp_spec(jnp.shape(v))))
            for k, v in params.items()}

main()
""", None),
    # rebound elsewhere: unknown, and these run
    "global_rebound_before_the_step_reads_it": ("""
BATCH_SIZE = 1

def step():
    mesh = jax.make_mesh((8,), ("data",))
    return jax.device_put(jnp.zeros((BATCH_SIZE, 4)), NamedSharding(mesh, P("data")))

def test_step():
    global BATCH_SIZE
    BATCH_SIZE = 8
    return step()

test_step()
""", None),
    "nonlocal_rebound_by_a_nested_function": ("""
def place():
    n = 6
    def grow():
        nonlocal n
        n = 8
    grow()
    mesh = jax.make_mesh((8,), ("data",))
    return jax.device_put(jnp.zeros((n, 4)), NamedSharding(mesh, P("data")))

place()
""", None),
}


test_check_follows_the_code, test_every_case_with_a_finding_expects_jax_to_raise, test_jax_agrees = \
    case_tests(HEAD, CASES)


def test_a_factory_shard_map_body_has_the_types_its_call_gives():
    # the factory's own analysis notes the body from the specs alone (shapes unknown);
    # the call in view gives it the local shapes, which that note must not join away
    from shardcheck.analyzer.inferred_types import infer_types
    program = HEAD + """
def make(mesh):
    def body(x):
        y = x * 2
        return y
    return jax.shard_map(body, mesh=mesh, in_specs=P("data", None), out_specs=P("data", None))

def main():
    mesh = jax.make_mesh((8,), ("data",))
    f = make(mesh)
    return f(jax.device_put(jnp.ones((64, 4)), NamedSharding(mesh, P("data", None))))

main()
"""
    types = {t.name: t.type for t in infer_types(program, "m.py")}
    assert types["y"] == "float32[8,4]{V:data}"


def test_a_range_with_a_step_of_zero_is_unknown_not_a_crash():
    # tunix's tests parametrize a step; range(a, b, 0) raises ValueError only when it runs
    from shardcheck.analyzer.engine import check_source
    program = HEAD + """
def zero_step(mesh):
    names = [("data", None)[i] for i in range(0, 2, 0)]  # ValueError, if it ran
    return NamedSharding(mesh, P(*names))
"""
    assert [f.code for f in check_source(program, "m.py")] == []
