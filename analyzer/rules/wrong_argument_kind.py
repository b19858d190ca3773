from ..facts import WrongArgumentKind
from ..ftypes import Invalid, Valid
from ..rule import ShardRule

_HEAD = """import jax
import jax.numpy as jnp
from jax.experimental import mesh_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
jax.config.update("jax_num_cpu_devices", 8)
"""


class WrongArgumentKindRule(ShardRule):
    """
    ## What it does
    Flags a sharding API given an argument of a kind it does not take, where the value
    shows it:
    - `NamedSharding(mesh, spec)` whose `mesh` is not a mesh (a `PartitionSpec`: the two
      arguments swapped; the array of devices `create_device_mesh` returns; `None`), or
      whose `spec` is not a `PartitionSpec` (a tuple or string of axis names, a list,
      `None`, a sharding);
    - `jax.make_mesh`, `mesh_utils.create_device_mesh` or `AbstractMesh` given one int
      where the sizes go, and `Mesh` given a number where the devices go, or devices
      with another number of dims than it has axis names (`Mesh(jax.devices(), ("data",
      "model"))`: the flat list for a 2-D mesh);
    - `jax.jit(in_shardings=..., out_shardings=...)` and `with_sharding_constraint` whose
      tree has a leaf that is not a sharding, a `PartitionSpec` or `None`: the
      `PyTreeDef` half of `tree_flatten(...)`, the ints of a tree of shapes, arrays, a
      mesh, axis names written as plain strings;
    - `jax.device_put(x, device)` whose `device` (or a leaf of it) is a number, a string
      or a mesh;
    - `jax.make_mesh`, `Mesh` or `AbstractMesh` whose `axis_types` is not a tuple of
      `jax.sharding.AxisType`s (the strings `"explicit"`, a list, `None` inside), or is
      a tuple of another length than the axis names (one `AxisType` alone counts as one).

    ## Why is this bad?
    JAX rejects each when the call runs (JAX 0.10.2 to 0.12, on 8 CPU devices):
    `NamedSharding(P("x"), mesh)` raises `AttributeError: 'P' object has no attribute
    'size'`, `NamedSharding(mesh, ("x", None))` raises `AttributeError: 'tuple' object
    has no attribute 'partitions'`, `create_device_mesh(8)` and `jax.make_mesh(8,
    ("data",))` raise `TypeError: 'int' object is not iterable`, `Mesh(8, ("data",))`
    and `Mesh(jax.devices(), ("data", "model"))` raise `ValueError: Mesh requires the
    ndim of its first argument (devices) ...`;
    `jax.jit` itself raises `TypeError: in_shardings leaf specifications are expected to
    be PartitionSpec instances or None, but got PyTreeDef(...)`, before the jitted
    function is ever called; `device_put(x, mesh)` raises `ValueError: jax.device_put
    only accepts None, jax.sharding.Sharding, jax.Device, ...`;
    `jax.make_mesh((2, 4), ("data", "model"), axis_types=("explicit", "explicit"))` raises
    `TypeError: axis_types passed to Mesh must be of type jax.sharding.AxisType`, and
    `axis_types=AxisType.Explicit` there raises `ValueError: Number of axis names should
    match the number of axis_types`. Only a value the
    analyzer knows is of the wrong kind is reported.

    ## Example
    ```python
    devices = mesh_utils.create_device_mesh(8)
    sharding = NamedSharding(P("data"), mesh)
    leaves, treedef = jax.tree_util.tree_flatten(param_shardings)
    step = jax.jit(train_step, in_shardings=(treedef, batch_sharding))
    ```

    Use instead:
    ```python
    devices = mesh_utils.create_device_mesh((8,))
    sharding = NamedSharding(mesh, P("data"))
    step = jax.jit(train_step, in_shardings=(param_shardings, batch_sharding))
    ```
    """

    CODE = "SC311"
    NAME = "wrong-argument-kind"
    JAX_FACTS = ("argument.spec_as_mesh", "argument.tuple_as_spec", "argument.int_as_shape",
                 "argument.number_as_devices", "argument.device_put_kind",
                 "jit.sharding_leaf_kind", "argument.axis_types_kind",
                 "argument.axis_types_count")
    VALID = [Valid(_HEAD + """\
devices = mesh_utils.create_device_mesh((8,))
mesh = Mesh(devices, ("data",))
abstract = jax.sharding.AbstractMesh((8,), ("data",))
rows = NamedSharding(mesh, P("data", None))
params = {"w": jnp.ones((8, 4)), "b": jnp.ones((4,))}
param_sh = jax.tree.map(lambda _: NamedSharding(mesh, P()), params)
leaves, treedef = jax.tree_util.tree_flatten(param_sh)
same = jax.tree_util.tree_unflatten(treedef, leaves)
step = jax.jit(lambda p, x: (p, x * 2), in_shardings=(same, rows), out_shardings=(param_sh, None))
p, y = step(params, jax.device_put(jnp.ones((8, 4)), rows))
z = jax.device_put(y, NamedSharding(mesh, P()))
"""),
        Valid(_HEAD + """\
from jax.sharding import AxisType
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
auto = jax.sharding.AbstractMesh((8,), ("data",), axis_types=AxisType.Auto)
rows = NamedSharding(mesh, P("data"))
""")]
    INVALID = [
        Invalid(_HEAD + """\
devices = mesh_utils.create_device_mesh(8)
""", line=6, message="the int 8", jax_error="'int' object is not iterable"),
        Invalid(_HEAD + """\
mesh = Mesh(jax.devices(), ("data", "model"))
""", line=6, message="1-dimensional for 2 axis names",
                jax_error="Mesh requires the ndim of its first argument"),
        Invalid(_HEAD + """\
mesh = jax.make_mesh((8,), ("data",))
rows = NamedSharding(P("data", None), mesh)
""", line=7, message="a PartitionSpec", jax_error="object has no attribute"),
        Invalid(_HEAD + """\
mesh = jax.make_mesh((8,), ("data",))
rows = NamedSharding(mesh, ("data", None))
""", line=7, message="a tuple", jax_error="'tuple' object has no attribute 'partitions'"),
        Invalid(_HEAD + """\
mesh = jax.make_mesh((8,), ("data",))
params = {"w": jnp.ones((8, 4)), "b": jnp.ones((4,))}
param_sh = jax.tree.map(lambda _: NamedSharding(mesh, P()), params)
flat = jax.tree_util.tree_flatten(param_sh)
step = jax.jit(lambda p: p, in_shardings=(flat,))
""", line=10, message="PyTreeDef", jax_error="leaf specifications are expected to be "
                                              "PartitionSpec instances or None"),
        Invalid(_HEAD + """\
mesh = jax.make_mesh((8,), ("data",))
params = {"w": jnp.ones((8, 4)), "b": jnp.ones((4,))}
shapes = jax.tree.map(lambda a: a.shape, params)
init = jax.jit(lambda: params, out_shardings=shapes)
""", line=9, message="a tree of shapes", jax_error="leaf specifications are expected to be "
                                                    "PartitionSpec instances or None"),
        Invalid(_HEAD + """\
mesh = jax.make_mesh((8,), ("data",))
x = jax.device_put(jnp.ones((8, 4)), mesh)
""", line=7, message="a mesh", jax_error="only accepts"),
        Invalid(_HEAD + """\
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=("explicit", "explicit"))
""", line=6, message="the string 'explicit'", jax_error="must be of type"),
        Invalid(_HEAD + """\
from jax.sharding import AxisType
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=AxisType.Explicit)
""", line=7, message="1 axis type for 2 axis names", jax_error="should match the number"),
    ]

    def check(self, ctx):
        for node, fact in ctx.facts(WrongArgumentKind):
            yield self.report(node, _message(fact))


_WANTS = {
    "mesh": ("a mesh (`jax.make_mesh(...)`, `Mesh(devices, names)` or an `AbstractMesh`)",
             "JAX raises when it is made (AttributeError: 'P' object has no attribute 'size' "
             "for a PartitionSpec, AttributeError for an array of devices, TypeError for None)"),
    "spec": ("a `PartitionSpec`",
             "JAX raises when it is made (AttributeError: '...' object has no attribute "
             "'partitions' for a tuple, a string or a sharding; TypeError for a list or None)"),
    "shape": ("a tuple of axis sizes", "JAX raises TypeError (\"'int' object is not iterable\")"),
    "devices": ("an array of devices (`mesh_utils.create_device_mesh(shape)`, or "
                "`np.array(jax.devices()).reshape(shape)`)",
                "JAX raises ValueError (\"Mesh requires the ndim of its first argument "
                "(`devices`) to equal the length of its second argument\")"),
    "shardings": ("a tree whose leaves are shardings, `PartitionSpec`s or None",
                  "`{api}` raises TypeError (\"{argument} leaf specifications are expected to be "
                  "PartitionSpec instances or None\")"),
    "axis_types": ("a tuple of `jax.sharding.AxisType`s",
                   "JAX raises TypeError (\"axis_types passed to {mesh_class} must be of type "
                   "`jax.sharding.AxisType`\")"),
    "axis_types_count": ("one `AxisType` per axis name",
                         "JAX raises ValueError (\"Number of axis names should match the number "
                         "of axis_types\")"),
    "device_put": ("a sharding, a device, or a tree of them",
                   "JAX raises ValueError (\"`jax.device_put` only accepts `None`, "
                   "`jax.sharding.Sharding`, `jax.Device`, ...\")"),
}


def _fix(f: WrongArgumentKind) -> str:
    got = f.got
    if f.kind == "mesh" and got == "a PartitionSpec":
        return "The arguments are swapped: write `NamedSharding(mesh, spec)`."
    if f.kind == "mesh" and got.startswith("an array"):
        return "Wrap the devices in a mesh first: `Mesh(devices, axis_names)`."
    if f.kind == "spec" and (got in ("a tuple", "a list") or got.startswith("the string")):
        return "Wrap the axis names in `PartitionSpec(...)` (`P(*names)`)."
    if f.kind == "shape":
        return f"Write the sizes as a tuple: `({got.rsplit(' ', 1)[-1]},)`."
    if f.kind == "shardings" and got.startswith("a PyTreeDef"):
        return ("Pass the tree of shardings itself, not `tree_flatten`'s result (or "
                "`tree_unflatten(treedef, leaves)` to rebuild it).")
    if f.kind == "shardings" and got.startswith("the int"):
        return ("This looks like a tree of shapes: map each leaf to a sharding "
                "(`jax.tree.map(lambda x: NamedSharding(mesh, spec_for(x)), tree)`).")
    if f.kind == "shardings" and got.startswith("an array"):
        return "Pass shardings, not the arrays: `jax.tree.map(lambda x: x.sharding, arrays)`."
    if f.kind == "shardings" and got.startswith("the string"):
        return "Wrap the axis names in `PartitionSpec(...)`."
    if got == "a mesh":
        return "Pass `NamedSharding(mesh, spec)` instead of the mesh."
    if f.kind == "devices" and "-dimensional for" in got:
        return ("Shape the devices with one dim per axis name: "
                "`mesh_utils.create_device_mesh(sizes)` or "
                "`np.array(jax.devices()).reshape(sizes)` (or `jax.make_mesh(sizes, names)`).")
    if f.kind == "axis_types":
        return ("Pass `AxisType` members in a tuple, e.g. "
                "`axis_types=(jax.sharding.AxisType.Explicit,) * len(axis_names)`.")
    if f.kind == "axis_types_count":
        return "Give one `AxisType` per axis name: `(AxisType.Explicit,) * len(axis_names)`."
    return "Pass a value of the kind it takes."


def _message(f: WrongArgumentKind) -> str:
    wants, raises = _WANTS[f.kind]
    raises = raises.format(api=f"jax.{f.api}" if f.api in ("jit", "pjit") else f.api,
                           argument=f.argument if f.argument != "shardings" else "shardings",
                           mesh_class="AbstractMesh" if f.api == "AbstractMesh" else "Mesh")
    api = "jax.jit" if f.api == "jit" else f.api
    where = f" `{f.argument}{f.path}`" if f.path else f" `{f.argument}`"
    more = (f" ({f.others} more lea{'ves' if f.others > 1 else 'f'} of the tree "
            f"{'are' if f.others > 1 else 'is'} no sharding either)") if f.others else ""
    return (f"`{api}`'s argument{where} is {f.got}, but it takes {wants}{more}: {raises}. "
            f"{_fix(f)}")
