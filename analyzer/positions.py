"""Where nodes are in the source: libcst's ``PositionProvider`` metadata, computed once.

``MetadataWrapper.resolve(PositionProvider)`` also walks the whole tree once more for
the batchable providers it resolves alongside, even when there are none (libcst 1.x):
about half of its cost. The provider alone generates the module's code once and
records every node's range on the way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:
    import libcst as cst
    from libcst.metadata import CodeRange


def node_positions(module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    """Node -> its ``CodeRange`` (1-based lines, 0-based columns), as ``PositionProvider``
    gives it."""
    from libcst.metadata import MetadataWrapper, PositionProvider
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    try:
        return PositionProvider()._gen(wrapper)  # type: ignore[return-value]  # CodeRanges, never lazy
    except AttributeError:  # a libcst without the provider's one-step entry point
        return wrapper.resolve(PositionProvider)
