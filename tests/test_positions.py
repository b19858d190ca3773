"""The positions findings are placed at are libcst's PositionProvider metadata exactly."""

import pathlib

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from shardcheck.analyzer.positions import node_positions

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_node_positions_are_the_metadata_wrappers():
    for path in sorted((ROOT / "examples").glob("*.py"))[:6]:
        module = cst.parse_module(path.read_text())
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        assert dict(node_positions(module)) == dict(expected), path
