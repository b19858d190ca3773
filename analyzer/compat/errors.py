"""The trace-time errors the rules predict, as JAX words them.

Each signature is the exception's class name and a regex over a verbatim part of JAX's
message. ``COMMON`` holds those every supported version words alike; the version
modules add the ones whose wording (or exception) changed. ``tests/test_compat.py``
raises each with a small program and matches the installed version's signature.
"""

from __future__ import annotations

from typing import Dict

from .profile import ErrorSignature as E

STE = "ShardingTypeError"

COMMON: Dict[str, E] = {
    # meshes and specs
    "mesh.axis_not_found": E("ValueError", r"Resource axis: \S+ of P\(.*\) is not found in mesh"),
    "mesh.operands_differ": E("ValueError", r"Mesh for all inputs should be equal"),
    "mesh.context_differs_from_operand": E(
        "ValueError", r"For primitive \w+, context mesh .* should match the aval mesh"),
    "mesh.context_differs_from_sharding": E(
        "ValueError", r"Context mesh .* should match the mesh of sharding .* passed to \w+"),
    "argument.spec_as_mesh": E("AttributeError", r"'P(artitionSpec)?' object has no attribute"),
    "argument.tuple_as_spec": E("AttributeError",
                                r"'tuple' object has no attribute 'partitions'"),
    "argument.int_as_shape": E("TypeError", r"'int' object is not iterable"),
    "argument.axis_types_kind": E(
        "TypeError", r"axis_types passed to \w+ must be of type `jax\.sharding\.AxisType`"),
    "argument.axis_types_count": E(
        "ValueError", r"Number of axis names should match the number of axis_types"),
    "argument.number_as_devices": E(
        "ValueError", r"Mesh requires the ndim of its first argument \(`devices`\) to equal the "
                      r"length of its second argument"),
    "argument.device_put_kind": E(
        "ValueError", r"`jax\.device_put` only accepts `None`, `jax\.sharding\.Sharding`"),
    "mesh.too_few_devices": E(
        "ValueError", r"Number of devices \d+ must be >= the product of mesh_shape"),
    "mesh.device_count_differs": E(
        "ValueError", r"Number of devices \d+ must equal the product of mesh_shape"),
    "mesh.unset_device_put": E(
        "ValueError", r"Please set a mesh via `jax\.set_mesh` if a PartitionSpec is passed to "
                      r"device_put"),
    "mesh.context_empty": E("ValueError", r"The context mesh cannot be empty"),
    "spec.duplicate_axis": E(
        "DuplicateSpecError", r"A single NamedSharding spec specification can map every mesh "
                              r"axis to at most one positional dimension"),
    "sharding.indivisible": E(
        "ValueError", r"implies that array axis \d+ is partitioned \d+ times, but does not "
                      r"evenly divide the dimension size \d+"),
    "axis_type.not_explicit": E(
        "ValueError", r"PartitionSpec passed to \w+ cannot contain axis names that are of "
                      r"type Auto or Manual"),
    # shard_map
    "shard_map.spec_axis_not_manual": E(
        "ValueError", r"shard_map \w+ argument must refer to an axis marked as manual"),
    "shard_map.in_spec_too_long": E("ValueError", r"was given an in_specs entry which is too long"),
    "shard_map.context_mesh_mismatch": E(
        "ValueError", r"The context mesh .* should match the mesh passed to shard_map"),
    "shard_map.replication_not_inferred": E(
        "ValueError", r"was given out_specs which require replication which can't be "
                      r"statically inferred"),
    "shard_map.spec_arity": E(
        "ValueError", r"pytree structure error: different lengths of tuple at key path\s+"
                      r"shard_map (in|out)_specs"),
    "shard_map.in_specs_mismatch": E(
        "ValueError", r"in_specs passed to shard_map: .* does not match the specs of the input"),
    "shard_map.check_rep": E(
        "TypeError", r"shard_map\(\) got an unexpected keyword argument 'check_rep'"),
    "shard_map.positional_mesh": E(
        "TypeError", r"shard_map\(\) takes from 0 to 1 positional arguments but \d+"),
    "collective.unbound_axis": E("NameError", r"Found an unbound axis name: \S+"),
    "collective.ppermute_clash": E(
        "ValueError", r"ppermute sources and destinations must be unique"),
    "collective.split_size": E(
        "ValueError", r"reduce_scatter operand scatter dimension size \d+ must (be divisible "
                      r"by|match) shard.count \d+|size of all_to_all split_axis \(\d+\) has to "
                      r"be divisible|all_to_all requires the size of the mapped axis"),
    "shard_map.out_spec_too_long": E("ValueError",
                                     r"was given an out_specs entry which is too long"),
    "shard_map.specs_list_not_tuple": E(
        "ValueError", r"pytree structure error: different types at key path\s+"
                      r"shard_map (in|out)_specs"),
    "shard_map.closure_explicit": E(
        "NotImplementedError", r"Closing over inputs to shard_map where the input is sharded "
                               r"on `Explicit` axes is not implemented"),
    # control flow: carries and branches keep their types (varying manual axes included)
    "scan.carry_types_differ": E(
        "TypeError", r"scan body function carry input and carry output must have equal types"),
    "while_loop.carry_types_differ": E(
        "TypeError", r"while_loop body function carry input and carry output must have "
                     r"equal types"),
    "cond.branch_types_differ": E("TypeError",
                                  r"(cond|switch) branches must have equal output types"),
    # jit and constraints
    "jit.in_shardings_mismatch": E(
        "ValueError", r"Sharding passed to jit does not match the sharding on the respective arg"),
    "jit.in_shardings_not_prefix": E(
        "ValueError", r"pjit in_shardings specification must be a tree prefix of the positional "
                      r"arguments tuple"),
    "jit.shardings_structure": E(
        "ValueError", r"pytree structure error: different (lengths of tuple|types|pytree "
                      r"metadata|numbers of pytree children) at key path\s+pjit (in|out)_shardings"),
    "jit.sharding_leaf_kind": E(
        "TypeError", r"(in_|out_)?shardings leaf specifications are expected to be PartitionSpec "
                     r"instances or None, but got"),
    "jit.removed_keyword": E(
        "TypeError", r"(jit|pjit|with_sharding_constraint)\(\) got an unexpected keyword argument "
                     r"'(in_|out_)?axis_resources'"),
    "jit.positional_arguments": E("TypeError",
                                  r"jit\(\) takes from 0 to 1 positional arguments"),
    "jit.kwargs_with_in_shardings": E(
        "ValueError", r"pjit does not support kwargs when in_shardings is specified"),
    "jit.spec_longer_than_rank": E(
        "ValueError", r"One of pjit (arguments|outputs) with pytree key path .* is only valid "
                      r"for values of rank at least \d+"),
    "with_sharding_constraint.non_auto_axis": E(
        "ValueError", r"The spec of NamedSharding passed to with_sharding_constraint can only "
                      r"refer to Auto axes of the mesh"),
    "with_sharding_constraint.assert": E(
        "AssertionError", r"`with_sharding_constraint` acts as an assert when all axes of mesh "
                          r"are of type `Explicit`"),
    # sharding rules of ops
    "dot_general.contracting_ambiguous": E(
        STE, r"Contracting dimensions are sharded and it is ambiguous how the output should "
             r"be sharded"),
    "dot_general.illegal_result": E(
        STE, r"dot_general operation with inputs: .* produces an illegally sharded result"),
    "matmul.incompatible_types": E("ValueError", r"Incompatible types for matmul arguments"),
    "broadcast.incompatible": E(STE, r"\w+ got incompatible shardings for broadcasting"),
    "scan.sharded_xs": E("ValueError", r"0th dimension of all xs should be replicated"),
    "pad.sharded_dim": E(STE, r"padding on sharded dims where out dim \(\d+\) is not divisible "
                              r"by mesh axes"),
    "dynamic_slice.sharded_dim": E(STE, r"dynamic_slice on sharded dims where out dim \(\d+\) "
                                        r"is not divisible by mesh axes"),
    "broadcast.illegal_result": E(
        STE, r"\w+ operation with inputs: .* produces an illegally sharded result"),
    "concatenate.operands_differ": E(STE, r"All operands should have the same sharding"),
    "dynamic_update_slice.operands_differ": E(
        STE, r"dynamic_update_slice operand sharding must be equal to update sharding"),
    "select.cases_differ": E(STE, r"select cases must have the same shardings"),
    "reshape.unsupported": E(
        STE, r"This reshape is not supported\. Please specify the sharding of the output via "
             r"the `out_sharding` argument"),
    "gather.ambiguous": E(
        STE, r"Use `\.at\[\.\.\.\]\.get\(out_sharding=\)` to provide output PartitionSpec for "
             r"the gather"),
    "cumulative.sharded_axis": E(STE, r"Input should be unsharded over the axis being reduced"),
    "sort.sharded_axis": E(STE, r"Arguments to sort must be unsharded over the sorting dimension"),
    "top_k.sharded_axis": E(
        STE, r"The input should be unsharded over the axis along which to compute the top_k "
             r"values"),
    "linalg.sharded_matrix_dim": E(STE, r"Input \d+ to \w+ must be unsharded on non-batch "
                                        r"dimensions"),
}

# Worded one way up to 0.10 ...
UP_TO_0_10: Dict[str, E] = {
    # P('x', None) on a rank-1 array
    "spec.longer_than_rank": E(
        "ValueError", r"One of device_put args is incompatible with its sharding annotation "
                      r".* is only valid for values of rank at least \d+"),
    # P('x', 'y') or P(None, 'y') on a rank-1 array: an assert deep in device_put
    "spec.longer_than_rank_sharded_last": E("AssertionError", r"^\(\d+, P\(.*\)\)$"),
    "dot_general.contracting_axes_differ": E(
        STE, r"dot_general requires contracting dimensions to have consistent sharding"),
    "dot_general.batch_sharding_differs": E(
        STE, r"dot_general requires lhs batch dimensions and rhs batch dimensions to have the "
             r"consistent sharding"),
    "roll.sharded_axis": E(
        STE, r"slicing on sharded dims where out dim \(\d+\) is not divisible by mesh axes "
             r"\(\d+\) with spec \(.*\) is not implemented"),
}

_SPEC_LENGTH = E("ValueError", r"Length of sharding\.spec \(\d+\) must be equal to aval's "
                               r"ndim \(\d+\)")

# ... and another from 0.11 on.
FROM_0_11: Dict[str, E] = {
    "spec.longer_than_rank": _SPEC_LENGTH,
    "spec.longer_than_rank_sharded_last": _SPEC_LENGTH,
    # 0.11 words contracting dims sharded over different axes as the ambiguous case
    "dot_general.contracting_axes_differ": COMMON["dot_general.contracting_ambiguous"],
    "dot_general.batch_sharding_differs": E(
        STE, r"dot_general requires lhs batch dimensions and rhs batch dimensions to have the "
             r"same sharding"),
    "roll.sharded_axis": E(STE, r"`a` cannot be sharded on the axis being rolled over"),
}
