"""Megatron-style attention output projection sharded over heads; the mesh is built
from data- and tensor-parallel degrees in an argparse-style config object."""

import argparse

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P


def parse_args(argv=()):
    parser = argparse.ArgumentParser()
    parser.add_argument("--dp", type=int, default=4)
    parser.add_argument("--tp", type=int, default=2)
    parser.add_argument("--heads", type=int, default=6)
    parser.add_argument("--head-dim", type=int, default=16)
    parser.add_argument("--d-model", type=int, default=64)
    return parser.parse_args(list(argv))


def make_mesh(args):
    return jax.make_mesh((args.dp, args.tp), ("data", "tensor"))


def place_out_projection(args, mesh):
    w = jax.random.normal(jax.random.key(0), (args.heads, args.head_dim, args.d_model))
    return jax.device_put(w * 0.02, NamedSharding(mesh, P("tensor", None, None)))


@jax.jit
def project(ctx, w_out):
    # ctx: [batch, seq, heads, head_dim], heads sharded like w_out's
    return jnp.einsum("bshd,hde->bse", ctx, w_out, out_sharding=P("data", None, None))


def main():
    args = parse_args()
    mesh = make_mesh(args)
    w_out = place_out_projection(args, mesh)
    ctx = jax.device_put(jnp.ones((8, 4, args.heads, args.head_dim)),
                         NamedSharding(mesh, P("data", None, "tensor", None)))
    with jax.set_mesh(mesh):
        y = project(ctx, w_out)
    print(jax.typeof(y))


if __name__ == "__main__":
    main()
