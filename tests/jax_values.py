"""Real JAX values of many sharding types, each recorded where it exists.

``collect()`` runs small programs on 8 CPU devices and returns, per value, a label, the
text ``str(jax.typeof(v))`` and the model ``sharding_types.typeof(v)``, taken at the
moment the value exists (tracers inside ``jit`` and ``shard_map`` included).
"""

from __future__ import annotations

from typing import List, Tuple

import sharding_types as st


def collect() -> List[Tuple[str, str, st.ShardingType]]:
    import jax
    import jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    out: List[Tuple[str, str, st.ShardingType]] = []

    def rec(label, v):
        out.append((label, str(jax.typeof(v)), st.typeof(v)))
        return v

    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
        a = rec("explicit 2d", jax.device_put(jnp.zeros((8, 16)), P("x", "y")))
        rec("tuple axes", jax.device_put(jnp.zeros((16, 3)), P(("x", "y"), None)))
        rec("tuple axes minor-major", jax.device_put(jnp.zeros((16, 3)), P(("y", "x"), None)))
        rec("1-tuple normalised", jax.device_put(jnp.zeros((16, 3)), P(("x",), None)))
        rec("replicated", jax.device_put(jnp.zeros((8, 16)), P()))
        rec("scalar", jnp.float32(1.0))
        rec("weak float scalar", jnp.asarray(1.0) * 2)
        rec("weak int scalar", jnp.array(3))
        rec("bfloat16", jax.device_put(jnp.zeros((8, 4), jnp.bfloat16), P(None, "y")))
        rec("int8", jax.device_put(jnp.zeros((4, 8), jnp.int8), P(None, "x")))
        rec("bool", jnp.zeros((4,), bool))
        rec("uint32", jnp.zeros((2, 2), jnp.uint32))
        rec("float16 3d", jax.device_put(jnp.zeros((2, 4, 6), jnp.float16), P("x", "y", None)))
        rec("complex64", jnp.zeros((3,), jnp.complex64))
        rec("int4", jnp.zeros((4,), jnp.int4))
        rec("float8_e4m3fn", jnp.zeros((4,), jnp.float8_e4m3fn))
        rec("size-1 dim", jax.device_put(jnp.zeros((1, 8)), P(None, "y")))
        rec("empty dim", jnp.zeros((0, 3)))
        rec("prng key", jax.random.key(0))
        rec("prng keys sharded", jax.device_put(jax.random.split(jax.random.key(0), 8), P("x")))
        rec("rbg key", jax.random.key(0, impl="rbg"))
        rec("host memory", jax.device_put(
            a, NamedSharding(mesh, P("x", "y"), memory_kind="pinned_host")))

        @jax.jit
        def traced(x, w):
            rec("tracer", x)
            rec("tracer elementwise", x * 2.0 + 1.0)
            rec("tracer transpose", x.T)
            rec("tracer reduce over sharded", jnp.sum(x, axis=0))
            rec("tracer dot out_sharding", jnp.dot(x, w, out_sharding=P("x", None)))
            rec("tracer unreduced", jnp.dot(x, w, out_sharding=P(None, None, unreduced={"y"})))
            rec("tracer reduced", jax.sharding.reshard(x, P("x", None, reduced={"y"})))
            rec("tracer weak scalar", jnp.float32(2.0) * 0 + 1)
            return x

        traced(a, jax.device_put(jnp.ones((16, 4)), P("y", None)))

        @jax.jit
        def smap(x):
            def body(xb):
                rec("shard_map body input", xb)
                s = rec("after psum x", jax.lax.psum(xb, "x"))
                rec("axis_index", jax.lax.axis_index("y"))
                rec("all_gather tiled", jax.lax.all_gather(xb, "y", axis=1, tiled=True))
                rec("psum_scatter", jax.lax.psum_scatter(xb, "y", scatter_dimension=1, tiled=True))
                rec("pmean both", jax.lax.pmean(xb, ("x", "y")))
                c = rec("invariant constant", jnp.zeros((4, 4)))
                rec("pcast to varying", jax.lax.pcast(c, ("x",), to="varying"))
                return s
            return jax.shard_map(body, in_specs=P("x", "y"), out_specs=P(None, "y"))(x)

        rec("shard_map output", smap(a))

        @jax.jit
        def partial_manual(x):
            def body(xb):
                rec("partial manual body", xb)
                return xb
            # in_specs may name only the manual axes; 'y' stays an Explicit sharding
            return jax.shard_map(body, in_specs=P("x"), out_specs=P("x"), axis_names={"x"})(x)

        rec("partial manual output", partial_manual(a))

    auto = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    d = rec("auto mesh concrete", jax.device_put(jnp.zeros((8, 16)), NamedSharding(auto, P("x", "y"))))
    with jax.set_mesh(auto):
        jax.jit(lambda v: rec("auto mesh tracer", v * 2))(d)

    cube = jax.make_mesh((2, 2, 2), ("a", "b", "c"))
    with jax.set_mesh(cube):
        rec("3-axis mesh", jax.device_put(jnp.zeros((8, 4, 2), jnp.uint8), P(("a", "c"), "b", None)))

        @jax.jit
        def cube_map(x):
            def body(xb):
                rec("3-axis varying subset", jax.lax.psum(xb, "b"))
                return xb
            return jax.shard_map(body, in_specs=P("a", "b", "c"), out_specs=P("a", "b", "c"))(x)

        cube_map(jax.device_put(jnp.zeros((4, 4, 4)), P("a", "b", "c")))
    return out
