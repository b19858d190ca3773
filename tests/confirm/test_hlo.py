"""Reading collectives out of optimised HLO text (shardcheck.hlo, no JAX).

The HLO lines below are copied from XLA's CPU dumps of the examples: JAX 0.10.2 writes
explicit or iota replica groups and ``#sdy.mesh`` meshes, newer XLA (JAX 0.12) writes
``replica_groups=mesh[...] {axes}``. test_confirm.py reads real dumps end to end.
"""

import pytest

from sharding_types import MeshModel
from shardcheck.confirm import hlo

# examples/tensor_parallel_mlp.py under JAX 0.10.2 (trimmed)
TP_MLP = '''HloModule jit_mlp, is_scheduled=true, entry_computation_layout={(f32[8,64]{1,0})->f32[8,64]{1,0}}, num_partitions=8

FileNames
1 "/work/main/examples/tensor_parallel_mlp.py"
2 "/work/main/sharding_types/_runtime.py"

FunctionNames
1 "<module>"
2 "main"
3 "check_shardings.<locals>.wrapper"
4 "mlp"

FileLocations
1 {file_name_id=1 function_name_id=1 line=52 end_line=52 column=4 end_column=4}
2 {file_name_id=1 function_name_id=2 line=44 end_line=44 column=14 end_column=14}
3 {file_name_id=2 function_name_id=3 line=288 end_line=288 column=14 end_column=14}
6 {file_name_id=1 function_name_id=4 line=34 end_line=34 column=11 end_column=11}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=1}
3 {file_location_id=3 parent_frame_id=2}
6 {file_location_id=6 parent_frame_id=3}


ENTRY %main.2 (param: f32[8,64]) -> f32[8,64] {
  ROOT %all-reduce = f32[8,64]{1,0} all-reduce(%ynn_fusion), channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true, to_apply=%add.clone, metadata={op_name="jit(mlp)/dot_general" stack_frame_id=6}
}
'''
BEFORE = 'HloModule jit_mlp, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<[\\"data\\"=2, \\"model\\"=4]>}}'


def test_tensor_parallel_all_reduce_over_model_at_its_source_line():
    mod = hlo.parse_module(TP_MLP, BEFORE, "/work/main/examples/tensor_parallel_mlp.py")
    assert (mod.name, mod.function, mod.num_partitions) == ("jit_mlp", "mlp", 8)
    assert mod.mesh == MeshModel(("data", "model"), (2, 4))
    [c] = mod.collectives
    assert (c.kind, c.axes, c.groups) == ("all-reduce", ("model",), ((0, 1, 2, 3), (4, 5, 6, 7)))
    assert c.result_bytes == 8 * 64 * 4
    assert c.bytes == 2 * 3 * 2048 // 4  # ring all-reduce: 2 (n-1)/n of the buffer
    assert (c.line, c.function, c.op) == (34, "mlp", "dot_general")
    assert c.short_shape == "f32[8,64]"


def test_newer_xla_names_the_mesh_axes_in_the_groups():
    text = ('HloModule jit_f, num_partitions=8\n'
            "  %psum.7 = f32[8,32]{1,0} all-reduce(%x), channel_id=1, replica_groups=mesh['data'=2,'model'=4] "
            "{'model'}, use_global_device_ids=true, to_apply=%r, metadata={op_name=\"jit(f)/shard_map/psum\"}\n"
            "  %ag = bf16[64,256]{1,0} all-gather(%p), channel_id=2, replica_groups=mesh['data'=2,'model'=4] "
            "{'data'}, dimensions={0}, use_global_device_ids=true, metadata={op_name=\"params['w1']\"}\n")
    mod = hlo.parse_module(text, "mesh['data'=2,'model'=4]")
    ar, ag = mod.collectives
    assert ar.axes == ("model",) and ar.groups == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert ag.axes == ("data",) and ag.groups == ((0, 4), (1, 5), (2, 6), (3, 7))
    assert ag.result_bytes == 64 * 256 * 2 and ag.bytes == 64 * 256 * 2 // 2
    assert ag.line is None and ag.op == "params['w1']"


def test_generic_axis_names_map_onto_the_recorded_mesh():
    # JAX 0.10.2's data-parallel gradient all-reduce: XLA's own axis names, a tuple result
    line = ("  %all-reduce.5 = (f32[128]{0}, f32[8]{0}, f32[]) all-reduce(%a, %b, %c), channel_id=1, "
            "replica_groups=mesh['axis_0'=8,'axis_1'=1] {'axis_0'}, use_global_device_ids=true, "
            "to_apply=%r, metadata={op_name=\"jit(train_step)/(transpose(jvp())/reduce_sum:"
            "transpose(jvp())/dot_general)\"}")
    mod = hlo.parse_module("HloModule jit_train_step, num_partitions=8\n" + line,
                           'xla.sdy.meshes={mesh = #sdy.mesh<[\\"data\\"=8]>}')
    [c] = mod.collectives
    assert c.axes == ("data",) and c.result_bytes == (128 + 8 + 1) * 4
    assert c.op == "reduce_sum+dot_general"


@pytest.mark.parametrize("groups, dims, perm, want", [
    ([2, 4], [8], None, ((0, 1, 2, 3), (4, 5, 6, 7))),
    ([4, 2], [2, 4], [1, 0], ((0, 4), (1, 5), (2, 6), (3, 7))),
    ([1, 8], [8], None, ((0, 1, 2, 3, 4, 5, 6, 7),)),
])
def test_iota_replica_groups(groups, dims, perm, want):
    assert hlo.iota_groups(groups, dims, perm) == want


def test_iota_groups_in_text_and_reduce_scatter_cost():
    text = ("HloModule jit_g, num_partitions=8\n  %rs = f32[8,8]{0,1} reduce-scatter(%p), channel_id=1, "
            "replica_groups=[4,2]<=[2,4]T(1,0), use_global_device_ids=true, dimensions={1}, to_apply=%r\n")
    [c] = hlo.parse_module(text, '#sdy.mesh<["data"=2, "model"=4]>').collectives
    assert c.axes == ("data",) and c.result_bytes == 256 and c.bytes == 256  # (n-1) * B, n = 2


def test_collective_permute_pairs_and_async_start():
    text = ("HloModule jit_h, num_partitions=4\n"
            "  %cp = f32[16]{0} collective-permute(%p), channel_id=1, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}\n"
            "  %ags = (f32[4]{0}, f32[16]{0}) all-gather-start(%p), channel_id=2, replica_groups={{0,1,2,3}}, dimensions={0}\n"
            "  %agd = f32[16]{0} all-gather-done(%ags)\n")
    cp, ag = hlo.parse_module(text, '#sdy.mesh<["ring"=4]>').collectives
    assert (cp.kind, cp.axes, cp.bytes) == ("collective-permute", ("ring",), 64)
    assert (ag.kind, ag.result_bytes, ag.bytes) == ("all-gather", 64, 48)


def test_groups_that_are_not_a_sub_mesh_have_no_axes():
    mesh = MeshModel(("data", "model"), (2, 4))
    assert hlo.axes_of([(0, 1), (2, 3, 4, 5, 6, 7)], mesh) is None
    assert hlo.axes_of([(0, 4), (1, 5), (2, 6), (3, 7)], mesh) == ("data",)
    assert hlo.axes_of([(0, 1, 2, 3, 4, 5, 6, 7)], mesh) == ("data", "model")


def test_bytes_of_shapes():
    assert hlo.array_bytes("bf16[3,5]{1,0}") == 30
    assert hlo.array_bytes("(f32[2]{0}, s8[3]{0}, pred[])") == 8 + 3 + 1
    assert hlo.fmt_bytes(3072) == "3.0 KiB" and hlo.fmt_bytes(100) == "100 B"
