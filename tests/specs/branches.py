"""Branches Python decides from constants (a run config's values, a factory's defaults),
and sites whose spec their callers set. The map takes the branch Python runs where the
test folds to a constant (`==`, `<`, `//`, `and`, `or`, `not`), says which values it
could not choose between, and lists a helper's site at each call that resolves it."""
import jax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

GLOBAL_BATCH = 8
PER_DEVICE_BATCH = 1
ENABLE_SP = False


def axes(is_sampling: bool = False, enable_sp: bool = ENABLE_SP):
    fsdp = "data" if not is_sampling else None
    sp = "model" if (not is_sampling and enable_sp) else None
    return (fsdp, sp) if fsdp and sp else fsdp


def place_batch(x, mesh):
    sharding = NamedSharding(mesh, P())
    if GLOBAL_BATCH // PER_DEVICE_BATCH >= 2:
        sharding = NamedSharding(mesh, P(axes()))
    return jax.device_put(x, sharding)


def place_rows(x, mesh, flag):
    rows = axes(enable_sp=True) or "data"
    spec = P(rows, None)
    if flag:  # decided when it runs: the map cannot choose
        spec = P(None, rows)
    return jax.device_put(x, NamedSharding(mesh, spec))


def constrain(x, names):
    return jax.lax.with_sharding_constraint(x, P(*names))


def layer(x):
    return constrain(x, (axes(), None))


def layer_t(x):
    return constrain(x, (None, axes()))


def place_unpacked(x, mesh, b):
    rows, cols = P("data", "model")
    if x.shape[0] % b:  # decided when it runs: rows is "data" or None
        rows = None
    return jax.device_put(x, NamedSharding(mesh, P(rows, cols)))
