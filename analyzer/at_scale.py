"""``--mesh``: the findings a production-sized mesh causes beyond those of the mesh the
source states, without the echoes of declarations that only break at the smaller scale."""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from .ftypes import ERROR, Pending

if TYPE_CHECKING:
    from .interp.model import Interpreter


# Rules comparing a declared type with the inferred one: at another mesh size they
# repeat what an earlier failure caused, or compare with a global shape the scaling
# changed (a shard_map output built from a local type the source states for its own mesh).
_DECLARATION_CONFLICTS = frozenset({"SC204", "SC307", "SC308", "SC309"})


def scale_caused(scaled: List[Pending], base: List[Pending],
                 model: "Interpreter") -> List[Pending]:
    """The findings at another mesh size (``--mesh``) worth reporting, given ``base``,
    the findings at the program's own meshes.

    A declaration conflict found at both sizes is kept. One found only at the new size
    is dropped when the scaling already breaks the program elsewhere (an error-level
    finding of another kind, such as SC104, that only the new size has: JAX stops
    there, and what follows is its consequence), or when it compares a global value
    whose shape differs from the declared one (global shapes do not depend on the
    mesh, so the difference is the scaling's artefact, not the program's)."""
    at_base = {(p.code, id(p.node)) for p in base}
    new = [p for p in scaled if (p.code, id(p.node)) not in at_base]
    breaks = any(p.code not in _DECLARATION_CONFLICTS and p.severity == ERROR for p in new)
    facts = {id(f.node): f.fact for f in model.events.facts}
    kept = []
    for p in scaled:
        if p.code in _DECLARATION_CONFLICTS and (p.code, id(p.node)) not in at_base and (
                breaks or _global_shape_differs(facts.get(id(p.node)))):
            continue
        kept.append(p)
    return kept


def _global_shape_differs(fact: object) -> bool:
    """An annotation conflict on a global value (not inside shard_map) whose known
    sizes differ from the declared ones."""
    from .facts import AnnotationConflict
    if not isinstance(fact, AnnotationConflict):
        return False
    declared, inferred = fact.declared, fact.inferred
    if declared.varying or inferred.varying or inferred.shape is None \
            or len(inferred.shape) != len(declared.dims):
        return False
    return any(d.size is not None and s is not None and d.size != s
               for d, s in zip(declared.dims, inferred.shape))
