"""Steady-state cost of runtime sharding checks in a jitted training step.

Runs the same data/tensor-parallel MLP training step with and without
``@check_shardings`` and ``assert_sharding`` (checks under ``jax.jit``, as the README
says to place them), interleaving the two so machine noise hits both alike, and prints
the ratio of median step times measured in this one run. Target: within 2% (ratio
<= 1.02). Also prints the one-off trace+compile time of each.

    python benchmarks/runtime_overhead.py [--rounds 30] [--steps 20]
"""

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import sharding_types as st  # noqa: E402
from sharding_types import Sharded, check_shardings  # noqa: E402

B, D, F = 256, 512, 1024


def loss_plain(params, x, y):
    h = jax.nn.gelu(x @ params["w_in"])
    out = jnp.dot(h, params["w_out"], out_sharding=P("data", None))
    return jnp.mean((out - y) ** 2)


def step_plain(params, x, y):
    loss, grads = jax.value_and_grad(loss_plain)(params, x, y)
    return jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads), loss


def loss_checked(params, x, y):
    st.assert_sharding(params["w_in"], "float32[D,F@model]")
    h = st.assert_sharding(jax.nn.gelu(x @ params["w_in"]), "float32[B@data,F@model]")
    out = jnp.dot(h, params["w_out"], out_sharding=P("data", None))
    st.assert_sharding(out, "float32[B@data,D]")
    return jnp.mean((out - y) ** 2)


@check_shardings
def step_checked(params,
                 x: Sharded[jax.Array, "float32[B@data,D]"],
                 y: Sharded[jax.Array, "float32[B@data,D]"]) -> tuple:
    loss, grads = jax.value_and_grad(loss_checked)(params, x, y)
    st.assert_sharding(grads["w_in"], "float32[D,F@model]")
    return jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads), st.assert_sharding(loss, "float32[]")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    jax.config.update("jax_num_cpu_devices", 8)
    with jax.set_mesh(jax.make_mesh((2, 4), ("data", "model"))):
        k = jax.random.split(jax.random.key(0), 4)
        params = {"w_in": jax.device_put(jax.random.normal(k[0], (D, F)) * 0.02, P(None, "model")),
                  "w_out": jax.device_put(jax.random.normal(k[1], (F, D)) * 0.02, P("model", None))}
        x = jax.device_put(jax.random.normal(k[2], (B, D)), P("data", None))
        y = jax.device_put(jax.random.normal(k[3], (B, D)), P("data", None))
        fns = {"plain": jax.jit(step_plain), "checked": jax.jit(step_checked)}
        compile_s = {}
        for name, fn in fns.items():
            t0 = time.perf_counter()
            jax.block_until_ready(fn(params, x, y))
            compile_s[name] = time.perf_counter() - t0
        samples = {name: [] for name in fns}
        for r in range(args.rounds):
            order = list(fns) if r % 2 == 0 else list(fns)[::-1]
            for name in order:
                fn, p = fns[name], params
                t0 = time.perf_counter()
                for _ in range(args.steps):
                    p, loss = fn(p, x, y)
                jax.block_until_ready(loss)
                samples[name].append((time.perf_counter() - t0) / args.steps)
    med = {n: statistics.median(s) for n, s in samples.items()}
    ratio = med["checked"] / med["plain"]
    result = {"step_ms_plain": med["plain"] * 1e3, "step_ms_checked": med["checked"] * 1e3,
              "ratio": ratio, "first_call_s_plain": compile_s["plain"],
              "first_call_s_checked": compile_s["checked"], "rounds": args.rounds,
              "steps_per_round": args.steps, "target_ratio": 1.02}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"median step: plain {result['step_ms_plain']:.3f} ms, checked "
              f"{result['step_ms_checked']:.3f} ms, ratio {ratio:.4f} (target <= 1.02)")
        print(f"first call (trace+compile): plain {compile_s['plain']:.3f} s, "
              f"checked {compile_s['checked']:.3f} s")


if __name__ == "__main__":
    main()
