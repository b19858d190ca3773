"""The analyzer on the realistic corpus (tests/realistic/, see its corpus.py): programs in
the shape of real code (Flax NNX and Linen modules, optax train steps, config objects,
classes that hold the mesh, shard_map kernels), each wrong in one place, beside a correct
twin.

Every program runs under JAX on 8 CPU devices (one batch, in parallel): each buggy.py
raises the recorded error from the recorded line, each fixed.py runs to the end, and
confirm's recorder gives the array assignments of the twins. Then shardcheck is held to
three measures, pinned at today's values so that none falls back unnoticed:

- no error-level finding on any fixed.py (FALSE_ERRORS lists today's exceptions);
- detection: the recorded rule at the recorded line of buggy.py (DETECTED, both ways:
  a case that starts being detected is added there);
- the types' coverage of the twins: the array assignments JAX saw that ``infer_types``
  gives a type, and of those, the ones equal to ``jax.typeof``.

``pytest tests/analyzer/test_realistic_corpus.py -s`` prints them per family.
"""

from __future__ import annotations

import difflib

import pytest

from realistic import corpus
from shardcheck.analyzer.catalog import rule_table

CASES = corpus.load()
BY_NAME = {c.name: c for c in CASES}
IDS = [c.name for c in CASES]

# the cases shardcheck reports today (the recorded rule at the recorded line)
DETECTED = {
    "class_kv_cache_heads",
    "class_loader_own_mesh",
    "class_method_batch_axis",
    "class_row_parallel_matmul",
    "class_step_in_shardings_arity",
    "class_subclass_bias_spec",
    "class_trainer_init_vocab",
    "config_dataclass_axis_default",
    "config_dict_activation_spec",
    "config_mesh_shape_swapped",
    "config_namedtuple_mesh_product",
    "config_ml_collections_heads",
    "config_rules_default_factory",
    "config_struct_global_batch",
    "linen_pooled_constraint_rank",
    "linen_rules_unknown_mesh_axis",
    "linen_square_kernel_names",
    "nnx_constraint_explicit_mesh",
    "nnx_heads_indivisible",
    "nnx_minigpt_batch_axis",
    "nnx_row_parallel_out_sharding",
    "nnx_rule_table_wrong_name",
    "nnx_shared_mesh_axis",
    "nnx_split_state_out_shardings",
    "nnx_tied_embed_gather",
    "nnx_two_meshes",
    "optax_metrics_out_shardings",
    "optax_fsdp_rule_bias",
    "optax_loss_on_vocab_sharded_logits",
    "optax_opt_state_given_param_shardings",
    "optax_restored_params_other_devices",
    "optax_step_called_with_keywords",
    "optax_trainstate_step_spec",
    "smap_batch_indivisible",
    "smap_in_specs_arity",
    "smap_partial_manual_axes",
    "smap_psum_config_axis",
    "smap_router_out_specs_arity",
}

# correct twins shardcheck reports an error on today: case -> why (a bug to fix)
FALSE_ERRORS: dict = {}

# over all fixed.py: array assignments with a static type, and those equal to jax.typeof
TYPED_AT_LEAST, AGREEING_AT_LEAST = 215, 215

@pytest.fixture(scope="module")
def jax_runs():
    """case -> (buggy.py's run, fixed.py's recorded run): one batch for the corpus."""
    from jax_snippets import cpus, run_and_record_programs
    runs, recorded = run_and_record_programs(
        [str(c.buggy) for c in CASES], [str(c.fixed) for c in CASES],
        preload=corpus.PRELOAD, parallel=cpus())
    return {c.name: (r, rec) for c, r, rec in zip(CASES, runs, recorded)}


@pytest.fixture(scope="module")
def static():
    return {c.name: corpus.analyse(c) for c in CASES}


# -- the corpus itself ------------------------------------------------------------------
def test_the_corpus_covers_every_family():
    assert len(CASES) >= 40
    counts = {f: sum(c.family == f for c in CASES) for f in corpus.FAMILIES}
    assert set(c.family for c in CASES) <= set(corpus.FAMILIES)
    assert min(counts.values()) >= 5, counts
    assert len({c.bug for c in CASES}) == len(CASES), "each case a different bug"


@pytest.mark.parametrize("name", IDS)
def test_each_case_is_a_realistic_program_with_a_twin(name):
    case = BY_NAME[name]
    buggy, fixed = case.buggy.read_text().splitlines(), case.fixed.read_text().splitlines()
    for lines in (buggy, fixed):
        assert 40 <= len(lines) <= 150, (name, len(lines))
    changed = set()
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, fixed, buggy).get_opcodes():
        if tag != "equal":
            changed.update(range(j1 + 1, max(j2, j1 + 1) + 1))
    assert case.line in changed, f"the twins do not differ at line {case.line} of buggy.py"
    assert case.url.startswith("https://github.com/"), case.url
    if case.rule:
        assert case.rule in rule_table(), f"{case.rule} is not a rule (`shardcheck rules`)"
    else:
        assert case.missing_rule, "a case with no rule says what the missing rule would flag"


# -- under JAX ------------------------------------------------------------------------------
def raised_as_recorded(case, exception: str, message: str) -> bool:
    """The recorded error: its 0.10.2 message, or its signature as the installed JAX words
    it (a case with ``signature``)."""
    if case.signature:
        from importlib.metadata import version
        from shardcheck.analyzer.compat import profile_for
        sig = profile_for(version("jax")).errors.get(case.signature)
        return sig is not None and sig.matches(exception, message)
    return exception == case.error and case.message in message


@pytest.mark.parametrize("name", IDS)
def test_buggy_raises_the_recorded_error_from_the_recorded_line(jax_runs, name):
    case, (run, _) = BY_NAME[name], jax_runs[name]
    if case.error == "silent":
        assert run["status"] == "ok", run
        return
    assert run["status"] == "error", run
    assert raised_as_recorded(case, run["type"], run["error"]), (run["type"], run["error"])
    # the innermost frame of the program: where its code called into JAX
    assert run["lines"] and run["lines"][-1] == case.raise_line, run["lines"]


@pytest.mark.parametrize("name", IDS)
def test_fixed_runs_to_the_end(jax_runs, name):
    _, recorded = jax_runs[name]
    assert recorded["error"] is None, recorded["error"]


# -- shardcheck -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", IDS)
def test_no_error_on_a_fixed_program(static, name):
    errors = static[name].fixed_errors
    if name in FALSE_ERRORS:
        assert errors, f"{name} is clean now: remove it from FALSE_ERRORS"
    else:
        assert errors == []


@pytest.mark.parametrize("name", IDS)
def test_detection_is_pinned(static, name):
    case, result = BY_NAME[name], static[name]
    if name in DETECTED:
        assert result.detected, (f"{case.rule} is no longer reported at line "
                                 f"{case.report_lines} of {name}/buggy.py: {result.buggy_findings}")
    else:
        assert not result.detected, f"{name} is detected now: add it to DETECTED"


def test_the_measures(static, jax_runs):
    cover = {}
    for c in CASES:
        cover[c.name] = corpus.coverage(static[c.name].types, jax_runs[c.name][1]["types"])
    seen, typed, agree = (sum(v[i] for v in cover.values()) for i in range(3))
    print()
    print(corpus.summary([static[c.name] for c in CASES], cover))
    detected = sum(static[c.name].detected for c in CASES)
    print(f"detection {detected}/{len(CASES)} ({detected / len(CASES):.0%}); types: "
          f"{typed}/{seen} array assignments typed ({typed / max(seen, 1):.0%}), "
          f"{agree} equal to jax.typeof")
    wrong = {c.name: w for c in CASES if (w := corpus.disagreements(
        static[c.name].types, jax_runs[c.name][1]["types"]))}
    for name, w in wrong.items():
        print(f"  {name}/fixed.py: static type differs from jax.typeof: {w}")
    assert seen > 0
    assert not wrong, "a static type differs from jax.typeof"
    assert typed >= TYPED_AT_LEAST and agree >= AGREEING_AT_LEAST, (typed, agree)
