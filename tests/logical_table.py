"""Cases of flax's logical-to-mesh resolution: (logical names, rules).

tests/test_logical_table.py runs each case through the installed flax and through
analyzer.logical_axes and compares the spec (or the error message).
"""

from shardcheck.analyzer.logical_axes import UNCONSTRAINED as U

RULES_T5X = (("batch", "data"), ("embed", None), ("mlp", "model"), ("heads", "model"),
             ("kv", None), ("vocab", "model"), ("length", None))
RULES_FSDP = (("batch", ("data", "fsdp")), ("embed", "fsdp"), ("mlp", "tensor"),
              ("heads", "tensor"), ("vocab", ("tensor", "fsdp")))
RULES_FALLBACK = (("batch", "data"), ("batch", "model"), ("embed", "data"),
                  ("embed", "model"), ("mlp", "model"), ("mlp", "data"))

# (names, rules) pairs for Linen's nn.logical_to_mesh_axes and NNX's rule lookup.
CASES = [
    # the docstring's own example
    (("batch", "length", "heads", "features"),
     (("batch", "X"), ("features", "X"), ("heads", "Y"), ("batch", "Z"))),
    (("batch", "embed"), RULES_T5X),
    (("embed", "mlp"), RULES_T5X),
    (("mlp", "embed"), RULES_T5X),
    (("batch", "length", "embed"), RULES_T5X),
    (("batch", "length", "heads", "kv"), RULES_T5X),
    (("vocab", "embed"), RULES_T5X),
    (("embed", "vocab"), RULES_T5X),
    (("batch", "embed"), RULES_FSDP),
    (("embed", "mlp"), RULES_FSDP),
    (("batch", "length", "embed"), RULES_FSDP),
    (("embed", "vocab"), RULES_FSDP),        # vocab wants fsdp, taken by embed: skipped
    (("vocab", "embed"), RULES_FSDP),
    (("batch", "vocab"), RULES_FSDP),        # fsdp in both tuples: vocab skipped
    (("heads", "mlp"), RULES_FSDP),          # both want tensor: the earlier rule wins
    (("mlp", "heads"), RULES_FSDP),
    # fallback rules: a later rule for the same name applies when the first is taken
    (("batch", "embed"), RULES_FALLBACK),
    (("embed", "batch"), RULES_FALLBACK),
    (("embed", "mlp"), RULES_FALLBACK),
    (("mlp", "embed"), RULES_FALLBACK),
    (("batch", "embed", "mlp"), RULES_FALLBACK),
    # None and unconstrained entries
    ((None, "embed"), RULES_FSDP),
    (("batch", None, None), RULES_FSDP),
    ((None, None), RULES_FSDP),
    ((U, "embed"), RULES_FSDP),
    (("batch", U, "embed"), RULES_FSDP),
    (("batch", "embed"), (("batch", U), ("embed", "data"))),
    # names with no rule
    (("batch", "typo"), RULES_FSDP),
    (("nope",), RULES_FSDP),
    (("batch", "embed"), ()),
    # a rule to None claims the dim: a later rule for it does not apply
    (("embed",), (("embed", None), ("embed", "data"))),
    (("batch", "embed"), (("batch", None), ("embed", "data"), ("batch", "data"))),
    # tuple mesh axes, partly used
    (("a", "b"), (("a", ("x", "y")), ("b", ("y", "z")), ("b", "z"))),
    (("a", "b"), (("a", ("x",)), ("b", ("x",)))),
    (("a", "b"), (("a", ()), ("b", "x"))),
    # the same mesh axis twice inside one rule: flax does not check it
    (("a",), (("a", ("x", "x")),)),
    # a rule for a name listed twice in the table: the first applicable wins
    (("a", "b"), (("a", "x"), ("a", "y"), ("b", "x"))),
    # duplicate logical names are an error
    (("batch", "batch"), RULES_FSDP),
    (("embed", None, "embed"), RULES_FSDP),
    ((None, None, "x"), ()),
    # YAML-shaped rules: lists for tuples
    (("batch", "embed"), (("batch", ["data", "fsdp"]), ("embed", ["fsdp"]))),
    (("embed", "batch"), (("batch", ["data", "fsdp"]), ("embed", ["fsdp"]))),
    # an empty spec
    ((), RULES_FSDP),
]

# (out_sharding, context rules, sharding_rules or None) for NNX's rule lookup.
NNX_CASES = [
    (("batch", "embed"), RULES_FSDP, None),
    (("embed", "vocab"), RULES_FSDP, None),      # NNX does not skip a used mesh axis
    (("heads", "mlp"), RULES_FSDP, None),
    (("batch", "typo"), RULES_FSDP, None),       # no rule: the name stays, as a mesh axis
    (("batch", "embed"), (), None),              # no rules at all: names unchanged
    (("batch", "embed"), RULES_FALLBACK, None),  # the last rule for a name wins
    (("batch", "embed"), (), RULES_FSDP),        # rules on the Variable only
    (("batch", "embed"), RULES_T5X, (("embed", "fsdp"),)),  # conflicting: an error
    (("batch", "embed"), RULES_T5X, (("embed", None), ("mlp", "x"))),  # consistent
    (("batch", "embed"), RULES_FSDP, ()),
    ((None, "embed"), RULES_FSDP, None),
    ((U, "embed"), RULES_FSDP, None),
    ((("batch", "embed"), None), RULES_FSDP, None),  # a tuple entry is looked up whole
    (("batch", "batch"), RULES_FSDP, None),      # no duplicate check in NNX
    ((), RULES_FSDP, None),
    (("batch", "embed"), (("batch", ["data", "fsdp"]), ("embed", ["x"])), None),
]
