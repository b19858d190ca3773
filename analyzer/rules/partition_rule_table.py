import difflib
import re
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ..flax_names import PathNames, missing_word, path_names
from ..ftypes import ERROR, WARNING, Invalid, Valid
from ..rule import ShardRule
from ..syntax import compound_blocks, dotted, import_bindings, string_value, walk

# EasyLM's matcher (jax_utils.match_partition_rules), on a tree of parameters: 13 lines,
# which tests/analyzer/test_partition_rule_table.py runs its cases after too
MATCHER = """import re
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as PS

def match_partition_rules(rules, params):
    def spec_for(path, leaf):
        name = "/".join(str(k.key) for k in path)
        for rule, ps in rules:
            if re.search(rule, name) is not None:
                return ps
        raise ValueError(f"no partition rule for {name}")
    return jax.tree_util.tree_map_with_path(spec_for, params)
"""
_MATCHER = MATCHER + """
params = {"wte": {"embedding": jnp.ones((64, 16))},
          "attn": {"wq": {"kernel": jnp.ones((16, 16))}, "wo": {"kernel": jnp.ones((16, 16))}},
          "ln_f": {"scale": jnp.ones((16,))}}
"""  # 17 lines

# a Linen model in the file, its parameters as jax.eval_shape(model.init) gives them
_FLAX_MODEL = MATCHER + """import flax.linen as nn


class Block(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Dense(16, name="wq")(x)
        return nn.Dense(16, name="wo")(x)


class Model(nn.Module):
    def setup(self):
        self.wte = nn.Embed(64, 16)
        self.attention = Block()

    def __call__(self, ids):
        return self.attention(self.wte(ids))


def get_partition_rules():
    return (
        ("wte/embedding", PS("mp", None)),
        ("attention/wq/kernel", PS(None, "mp")),
        ("attention/wo/kernel", PS("mp", None)),
        (".*", PS(None)),
    )


ids = jax.ShapeDtypeStruct((2, 8), jnp.int32)
params = jax.eval_shape(Model().init, jax.random.key(0), ids)["params"]
specs = match_partition_rules(get_partition_rules(), params)
"""

_SPEC_NAMES = ("jax.sharding.PartitionSpec", "jax.P", "jax.sharding.P",
               "jax.interpreters.pxla.PartitionSpec", "jax.experimental.pjit.PartitionSpec")
_CATCH_ALL = {"", ".*", ".+", "^.*$", "^.*", ".*$", "(.*)", ".*?", "^(.*)$"}


class PartitionRuleTable(ShardRule):
    """
    ## What it does
    Reads the regex partition-rule tables of EasyLM, EasyDeL and big_vision style: a
    tuple or list of `(regex, PartitionSpec)` pairs that a matcher walks in order,
    giving each parameter path the spec of the first regex that `re.search`es it
    (`for rule, ps in rules: if re.search(rule, name): return ps`). A literal with at
    least two such pairs is a table. It flags:
    - an entry that is not a `(regex, spec)` pair: a missing closing parenthesis that
      swallows the following rules into one entry, a spec or a string alone, a pair
      written `(spec, regex)`, a tuple of pairs as one entry (errors);
    - a regex that does not compile (an error);
    - a rule-table function that builds its table and returns nothing (an error);
    - a rule that can never apply: one after a catch-all (`".*"`), or a regex already
      written earlier in the table (warnings);
    - a rule that names no parameter of the Flax modules the same file defines (a
      warning): a word the regex must match (`attn` in `attn/(wq|wk)/kernel`) that no
      submodule or parameter name of theirs holds, where the table's other rules name
      them. The names are read as Flax gives them (the attributes `setup` assigns,
      `name=`, `self.param("kernel", ...)`, the built-in layers' `kernel`, `bias`,
      `embedding`, `scale`, numbered names such as `Dense_0` and `layers_0`); a file whose
      modules take a name from elsewhere (a layer of another file or library, a
      `name=` computed at run time) is not read.

    ## Why is this bad?
    The matcher unpacks each entry into two names and passes the first to `re.search`:
    an entry of three or more items raises `ValueError: too many values to unpack`, a
    spec in the regex's place raises `TypeError: first argument must be string or
    compiled pattern`, and a regex that does not compile raises `re.error` for every
    parameter. A table function that ends without `return` gives `None`, and the
    matcher raises `TypeError: 'NoneType' object is not iterable`. A rule after a
    catch-all never matches anything, so the parameters it was written for silently
    get the catch-all's spec (usually replicated): the program runs, with more memory
    per device than intended. So do the parameters of a rule whose names are not the
    model's (a submodule renamed, `attention` written `attn`).

    ## Example
    ```python
    def get_partition_rules():
        return (
            ("transformer/wte/embedding", PS("mp", "fsdp")),
            ("attention/(wq|wk|wv)/kernel", PS("fsdp", "mp"),
            ("attention/wo/kernel", PS("mp", "fsdp"))),
            (".*", PS(None)),
            ("ln_f/kernel", PS(None)),
        )
    ```

    Use instead:
    ```python
    def get_partition_rules():
        return (
            ("transformer/wte/embedding", PS("mp", "fsdp")),
            ("attention/(wq|wk|wv)/kernel", PS("fsdp", "mp")),
            ("attention/wo/kernel", PS("mp", "fsdp")),
            ("ln_f/kernel", PS(None)),
            (".*", PS(None)),
        )
    ```
    """

    CODE = "SC112"
    NAME = "partition-rule-table"
    JAX_SINCE = None  # plain Python: re and tuples, whatever the JAX version
    VALID = [Valid(_MATCHER + """\
def get_partition_rules():
    return (
        ("wte/embedding", PS("mp", None)),
        ("attn/(wq|wk|wv)/kernel", PS(None, "mp")),
        ("attn/wo/kernel", PS("mp", None)),
        (".*", PS(None)),
    )

specs = match_partition_rules(get_partition_rules(), params)
"""), Valid(_FLAX_MODEL)]
    INVALID = [
        Invalid(_MATCHER + """\
def get_partition_rules():
    return (
        ("wte/embedding", PS("mp", None)),
        ("attn/wq/kernel", PS(None, "mp"),
        ("attn/wo/kernel", PS("mp", None))),
        (".*", PS(None)),
    )

specs = match_partition_rules(get_partition_rules(), params)
""", line=21, message="3 items", jax_error="too many values to unpack"),
        Invalid(_MATCHER + """\
def get_partition_rules():
    rules = (
        ("wte/embedding", PS("mp", None)),
        ("attn/(wq|wo)/kernel", PS(None, "mp")),
        (".*", PS(None)),
    )

specs = match_partition_rules(get_partition_rules(), params)
""", line=19, message="returns None", jax_error="'NoneType' object is not iterable"),
        Invalid(_MATCHER + """\
RULES = (
    ("wte/embedding", PS("mp", None)),
    (".*", PS(None)),
    ("attn/(wq|wo)/kernel", PS(None, "mp")),
)
specs = match_partition_rules(RULES, params)
""", line=21, message="never applies", jax_outcome="wrong-result",
            witness='assert specs["attn"]["wq"]["kernel"] == PS(None, "mp")\n'),
        Invalid(_FLAX_MODEL.replace('"attention/wq/kernel"', '"attn/wq/kernel"'), line=36,
                message="named with `attn` (`attention`?)", jax_outcome="wrong-result",
                witness='assert specs["attention"]["wq"]["kernel"] == PS(None, "mp")\n'),
    ]

    def check(self, ctx):
        module = ctx.model.module
        names = _spec_names(module)
        if not names:
            return
        functions: List[cst.FunctionDef] = []
        modules: List[Optional[PathNames]] = []  # the file's Flax modules' names, read once
        for value in _statement_values(module.body, functions):
            if isinstance(value, (cst.Tuple, cst.List)) and _is_table(value, names):
                yield from self._table(value, names)
                if not modules:
                    modules.append(path_names(module))
                if modules[0] is not None:
                    yield from self._unmatched(value, names, modules[0])
        for fn in functions:
            dropped = _dropped_table(fn, names)
            if dropped is not None:
                yield self.report(
                    dropped,
                    f"`{fn.name.value}` builds this partition-rule table but has no `return`: it "
                    "returns None, and a matcher that walks the rules (`for rule, ps in rules`) "
                    "raises TypeError (\"'NoneType' object is not iterable\"). Return the table.",
                    ERROR, related=[(fn.name, "the function")])

    def _unmatched(self, table, names, modules: PathNames):
        """Rules that name no parameter of the file's Flax modules, where the table
        evidently speaks of them: more of its rules name their own submodules than not."""
        pairs = [p for p in (_pair(e.value, names) for e in table.elements) if p is not None]
        read = [(regex, node) + _matching(regex, modules) for regex, node in pairs
                if _compiles(regex)]
        missing = [(regex, node, word) for regex, node, word, _ in read if word is not None]
        speaking = sum(1 for _, _, word, own in read if word is None and own)
        if not missing or speaking < 2 or speaking <= len(missing):
            return
        classes = ", ".join(f"`{c}`" for c in sorted(modules.classes)[:4]) + (
            ", ..." if len(modules.classes) > 4 else "")
        for regex, node, word in missing:
            shown = re.search(r"\w*" + re.escape(word) + r"\w*", regex)
            shown_word = shown.group(0) if shown else word
            close = difflib.get_close_matches(shown_word, sorted(modules.own), n=1)
            hint = f" (`{close[0]}`?)" if close else ""
            yield self.report(
                node, f"the rule {regex!r} matches no parameter of this file's Flax modules "
                f"({classes}): no submodule or parameter of theirs is named with "
                f"`{shown_word}`{hint}, so the parameters it was written for fall through to a "
                "later rule (or to none, and the matcher raises). Use the module's name.",
                WARNING)

    def _table(self, table, names):
        seen: Dict[str, cst.CSTNode] = {}
        catch_all: Optional[cst.CSTNode] = None
        for entry in (e.value for e in table.elements):
            pair = _pair(entry, names)
            if pair is None:
                yield self.report(entry, _malformed(entry, names), ERROR)
                continue
            regex, node = pair
            try:
                re.compile(regex)
            except re.error as e:
                yield self.report(node, f"the regex {regex!r} of this partition rule does not "
                                  f"compile ({e}): `re.search` raises re.error for every "
                                  "parameter path. Fix the pattern (escape a literal `(`, `[` "
                                  "or `.` with a backslash).", ERROR)
                continue
            if catch_all is not None:
                yield self.report(node, f"the rule {regex!r} never applies: the catch-all "
                                  "rule above matches every parameter path first (rules are "
                                  "tried in order, the first match wins), so the parameters it "
                                  "names get the catch-all's spec. Move the catch-all last.",
                                  WARNING, related=[(catch_all, "the catch-all")])
            elif regex in seen:
                yield self.report(node, f"the rule {regex!r} never applies: the same regex "
                                  "is an earlier rule of this table, which matches first (the "
                                  "first match wins). Delete one, or give it another pattern.",
                                  WARNING, related=[(seen[regex], "the earlier rule")])
            seen.setdefault(regex, node)
            if regex in _CATCH_ALL and catch_all is None:
                catch_all = node


def _matching(regex: str, names: PathNames) -> Tuple[Optional[str], bool]:
    """(a word of ``regex`` no name of the modules holds, whether a word of it is one of
    the modules' own names rather than a generic key such as ``kernel``)."""
    word = missing_word(regex, names.holds)
    own = missing_word(regex, lambda w: not any(w in n for n in names.own)) is not None
    return word, own


def _statement_values(body, functions: List[cst.FunctionDef]) -> Iterator[cst.BaseExpression]:
    """The values the statements of ``body`` (and of the blocks and functions in it)
    assign, return or evaluate: where a rule table is written (a table passed straight
    into a call is not read); ``functions`` gets the functions met."""
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Assign, cst.AnnAssign, cst.Return, cst.Expr)) \
                        and small.value is not None:
                    yield small.value
            continue
        if isinstance(stmt, cst.FunctionDef):
            functions.append(stmt)
        if isinstance(stmt, cst.BaseCompoundStatement):
            for inner in _bodies(stmt):
                yield from _statement_values(inner, functions)


def _bodies(stmt: cst.BaseCompoundStatement) -> Iterator[Sequence[cst.CSTNode]]:
    """The statement lists of a compound statement's blocks (an ``elif`` as a list of one)."""
    for block in compound_blocks(stmt):
        if isinstance(block, cst.If):
            yield [block]
        elif isinstance(block, cst.IndentedBlock):
            yield block.body


def _imports(body) -> Iterator[cst.CSTNode]:
    """The import statements at module level (inside ``if``/``try`` blocks too)."""
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            yield from (s for s in stmt.body if isinstance(s, (cst.Import, cst.ImportFrom)))
        elif isinstance(stmt, (cst.If, cst.Try)):
            for inner in _bodies(stmt):
                yield from _imports(inner)


def _compiles(regex: str) -> bool:
    try:
        re.compile(regex)
    except re.error:
        return False
    return True


def _spec_names(module: cst.Module) -> Set[str]:
    """The names and dotted names a ``PartitionSpec`` is called by in this module."""
    names: Set[str] = set()
    modules: Dict[str, str] = {}
    for n in _imports(module.body):
        for bound, full in import_bindings(n):
            if isinstance(n, cst.Import):
                modules[bound] = full
            elif full in _SPEC_NAMES:
                names.add(bound)
            elif full in ("jax.sharding", "jax"):
                modules[bound] = full
    for bound, full in modules.items():
        for spec in _SPEC_NAMES:
            if spec.startswith(full + "."):
                names.add(bound + spec[len(full):])
    return names


def _is_spec(node: cst.BaseExpression, names: Set[str]) -> bool:
    return isinstance(node, cst.Call) and dotted(node.func) in names


def _regex(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.SimpleString):
        v = string_value(node)
        return v if isinstance(v, str) else None
    if isinstance(node, cst.ConcatenatedString):
        left, right = _regex(node.left), _regex(node.right)
        return left + right if left is not None and right is not None else None
    return None


def _pair(entry: cst.BaseExpression, names: Set[str]) -> Optional[Tuple[str, cst.CSTNode]]:
    if isinstance(entry, cst.Tuple) and len(entry.elements) == 2:
        regex = _regex(entry.elements[0].value)
        if regex is not None and _is_spec(entry.elements[1].value, names):
            return regex, entry.elements[0].value
    return None


def _is_table(node: cst.BaseExpression, names: Set[str]) -> bool:
    elements = node.elements  # type: ignore[attr-defined]  # a Tuple or List
    return len(elements) >= 2 and not any(isinstance(e, cst.StarredElement) for e in elements) \
        and sum(1 for e in elements if _pair(e.value, names) is not None) >= 2


def _malformed(entry: cst.BaseExpression, names: Set[str]) -> str:
    unpack = ("a matcher that walks the rules (`for rule, ps in rules: re.search(rule, "
              "path)`) raises")
    if isinstance(entry, cst.Tuple) and len(entry.elements) > 2 \
            and _regex(entry.elements[0].value) is not None:
        swallowed = sum(1 for e in entry.elements[2:] if _pair(e.value, names) is not None)
        why = (f" (it holds {swallowed} more rule{'s' if swallowed > 1 else ''}: a closing "
               "parenthesis is missing after its spec)") if swallowed else ""
        return (f"this partition rule has {len(entry.elements)} items, not a (regex, spec) "
                f"pair{why}: {unpack} ValueError (\"too many values to unpack\"). Close the "
                "pair after its spec.")
    if isinstance(entry, cst.Tuple) and len(entry.elements) == 2 \
            and _is_spec(entry.elements[0].value, names) \
            and _regex(entry.elements[1].value) is not None:
        return (f"this partition rule is written (spec, regex): {unpack} TypeError (\"first "
                "argument must be string or compiled pattern\"). Write the regex first.")
    if isinstance(entry, (cst.Tuple, cst.List)) and entry.elements \
            and all(_pair(e.value, names) is not None for e in entry.elements):
        return (f"this entry is a {'list' if isinstance(entry, cst.List) else 'tuple'} of "
                f"{len(entry.elements)} rules, not one (regex, spec) pair: {unpack} on it. "
                "Splice its rules into the table (`*rules`).")
    what = ("a PartitionSpec alone" if _is_spec(entry, names) else
            "a string alone" if _regex(entry) is not None else "not a (regex, spec) pair")
    return (f"this entry of a partition-rule table is {what}: {unpack} on it (it cannot be "
            "unpacked into a regex and a spec). Write it as `(regex, PartitionSpec(...))`.")


def _dropped_table(fn: cst.FunctionDef, names: Set[str]) -> Optional[cst.CSTNode]:
    """Where a function builds a rule table and drops it: a bare table statement, or
    the name a table is assigned to that the function never reads, in a function with no ``return value``
    (nor ``yield``). The body's own statements are read first: walking every function's
    whole body was 7% of a check on maxdiffusion, and few build a table."""
    if not isinstance(fn.body, cst.IndentedBlock):
        return None
    candidates: List[Tuple[cst.CSTNode, Optional[str]]] = []  # (where, the name bound)
    for stmt in fn.body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.Tuple, cst.List)) \
                    and _is_table(small.value, names):
                candidates.append((small, None))
            if isinstance(small, cst.Assign) and isinstance(small.value, (cst.Tuple, cst.List)) \
                    and _is_table(small.value, names) and len(small.targets) == 1 \
                    and isinstance(small.targets[0].target, cst.Name):
                candidates.append((small.targets[0].target, small.targets[0].target.value))
    if not candidates:
        return None
    nodes = list(walk(fn.body, layout=False))
    if any(isinstance(n, (cst.Return,)) and n.value is not None for n in nodes) \
            or any(isinstance(n, (cst.Yield, cst.FunctionDef, cst.Lambda)) for n in nodes):
        return None
    loads = _loaded_names(fn.body)
    for where, bound in candidates:
        if bound is None or bound not in loads:
            return where
    return None


def _loaded_names(body: cst.CSTNode) -> Set[str]:
    """The names read in ``body`` (any Name not an assignment's target)."""
    targets: Set[int] = set()
    for n in walk(body, layout=False):
        if isinstance(n, cst.AssignTarget):
            targets.update(id(t) for t in walk(n.target, layout=False))
    return {n.value for n in walk(body, layout=False)
            if isinstance(n, cst.Name) and id(n) not in targets}
