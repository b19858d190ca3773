"""analyzer.logical_axes against the installed flax, case by case (tests/logical_table.py):
Linen's ``nn.logical_to_mesh_axes`` and the unmatched names ``with_logical_constraint``
leaves unsharded, NNX's ``get_partition_spec`` of a Variable and its eager sharding
rules, with flax's own error messages.
"""

import pytest

from logical_table import CASES, NNX_CASES
from shardcheck.analyzer import logical_axes as la


@pytest.fixture(scope="module")
def flax_mods(jax8):
    pytest.importorskip("flax", reason="flax is not installed (pip install -e '.[test]')")
    import flax.core.spmd as core_spmd
    import flax.linen as nn
    import flax.linen.spmd as linen_spmd
    from flax import nnx
    return nn, linen_spmd, core_spmd, nnx


def _to_flax(v, P):
    if v is la.UNCONSTRAINED:
        return P.UNCONSTRAINED
    if isinstance(v, tuple):
        return tuple(_to_flax(i, P) for i in v)
    if isinstance(v, list):
        return [_to_flax(i, P) for i in v]
    return v


def _ours(fn, *args):
    try:
        return "ok", fn(*args)
    except la.LogicalAxisError as e:
        return "error", str(e)


def _theirs(fn, *args):
    try:
        return "ok", fn(*args)
    except ValueError as e:
        return "error", str(e)


def _spec(outcome, P):
    kind, v = outcome
    return (kind, P(*_to_flax(v, P))) if kind == "ok" else outcome


@pytest.mark.parametrize("names,rules", CASES, ids=[f"linen{i}" for i in range(len(CASES))])
def test_linen_logical_to_mesh_axes(flax_mods, names, rules):
    nn, linen_spmd, _, _ = flax_mods
    from jax.sharding import PartitionSpec as P
    theirs = _theirs(nn.logical_to_mesh_axes, _to_flax(names, P), _to_flax(rules, P))
    ours = _spec(_ours(la.linen_logical_to_mesh_axes, names, la.normalize_rules(rules)), P)
    assert ours == theirs
    if ours[0] == "ok":
        raw = linen_spmd._logical_to_mesh_axes(_to_flax(names, P), _to_flax(rules, P))
        unassigned = tuple(n for n, e in zip(names, raw) if e is linen_spmd._unassigned_axis)
        assert la.linen_unassigned(names, la.normalize_rules(rules)) == unassigned


@pytest.mark.parametrize("sharding,context,local", NNX_CASES,
                         ids=[f"nnx{i}" for i in range(len(NNX_CASES))])
def test_nnx_partition_spec(flax_mods, sharding, context, local):
    _, _, core_spmd, nnx = flax_mods
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P
    meta = {} if local is None else {"sharding_rules": _to_flax(local, P)}

    def flax_pspec():
        with nnx.use_eager_sharding(False):
            v = nnx.Param(jnp.zeros((1,) * len(sharding)), out_sharding=_to_flax(sharding, P), **meta)
        return nnx.get_partition_spec(v).get_value()

    def flax_eager_spec():
        return core_spmd.apply_rules(_to_flax(sharding, P), meta.get("sharding_rules"))

    ctx_rules = _to_flax(context, P)
    ours_rules = la.normalize_rules(context), None if local is None else la.normalize_rules(local)
    with core_spmd.logical_axis_rules(ctx_rules):
        theirs = _theirs(flax_pspec)
        theirs_eager = _theirs(flax_eager_spec)
    assert _spec(_ours(la.nnx_var_pspec, sharding, *ours_rules), P) == theirs
    assert _spec(_ours(la.nnx_apply_rules, sharding, *ours_rules), P) == theirs_eager
