"""Python statements: blocks, assignments, control flow, ``with``, ``def``, imports."""

from __future__ import annotations

from typing import Any, List, Optional, Union

import libcst as cst

from ..events import MeshCtx, TypeRecord
from ..api import as_sequence, get_hook
from ..project import relative_base
from ..slices import STAR
from ..values import (UNKNOWN, ArrayVal, Const, DictVal, FuncVal, MeshVal, ProjectModule, QualName,
                      TupleVal, Value, merge_item)
from ..syntax import compound_blocks, dotted, has_yield
from ..values import InstanceVal
from .base import InterpreterBase
from .expressions import condition_truth, truth
from .objects import CLASS_KEY, make_class, with_attribute
from .state import Env, LazyImport, MeshContextVal

_RAISES = ("raises", "assertRaises", "assertRaisesRegex", "assertRaisesWithLiteralMatch",
           "assertWarns", "assertWarnsRegex", "assertRaisesRegexp")
_LOOP_RERUNS = 2
_LOOP_UNROLL = 8  # a for loop over at most this many known items runs once per item


class StatementsMixin(InterpreterBase):
    """The statement half of the interpreter (mixed into ``Interpreter``)."""

    def exec_block(self, body: Any, env: Env, ctx: MeshCtx) -> MeshCtx:
        """Run a block's statements. Past a statement that always returns or raises
        (``return``, ``raise``, an ``if`` whose branch Python takes does, a loop over known
        items that returns), the rest is still read for its sites, but as a branch Python
        does not run: its values are judged nowhere, its calls give no function a context,
        and what it returns is dropped. ``self.ended`` says, after, whether the block did
        so."""
        stmts = body.body if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else body
        ended = False
        try:
            for stmt in stmts:
                n = len(self.returns) if self.returns is not None else 0
                self.ended = False
                ctx = self.exec_stmt(stmt, env, ctx)
                if ended and self.returns is not None:
                    del self.returns[n:]
                elif self.ended and (isinstance(stmt, _ENDING) or
                                     (self.assume_defaults and isinstance(stmt, cst.With))):
                    # what follows never runs here (`if mesh is None: raise` for a call
                    # that passes None): its values are judged nowhere, as a dead branch's
                    ended = True
                    self.dead_branches += 1
        finally:
            self.dead_branches -= ended
        self.ended = ended
        return ctx

    def exec_stmt(self, stmt: cst.CSTNode, env: Env, ctx: MeshCtx) -> MeshCtx:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                ctx = self.exec_small(small, env, ctx)
            self.ended = any(type(small) in _ENDS for small in stmt.body)
            return ctx
        if isinstance(stmt, cst.BaseSmallStatement):  # a one-line body: `if c: x = 1`
            ctx = self.exec_small(stmt, env, ctx)
            self.ended = type(stmt) in _ENDS
            return ctx
        if isinstance(stmt, cst.FunctionDef):
            self.exec_def(stmt, env, ctx)
        elif isinstance(stmt, cst.ClassDef):
            for d in stmt.decorators:
                self.ev(d.decorator, env, ctx)
            bases = tuple(self.ev(b.value, env, ctx) for b in stmt.bases)
            saved = self.env
            body = Env(parent=env)
            self.exec_block(stmt.body, body, ctx)
            self.env = saved
            env.vars[stmt.name.value] = UNKNOWN
            if self.assume_defaults:  # shardcheck specs: config objects' declared defaults
                cls = make_class(stmt, body, bases, self.module)
                body.vars[CLASS_KEY] = cls
                env.vars[stmt.name.value] = cls
            else:
                # a method's self, for the mesh its set-up stores (interp/set_up.py)
                self.class_bodies[id(body)] = (stmt, body, bases)
                if all(_keeps_class(d.decorator) for d in stmt.decorators):
                    # instances a call in view makes (interp/instances.py)
                    cls = make_class(stmt, body, bases, self.module, walk_methods=False)
                    body.vars[CLASS_KEY] = cls
                    env.vars[stmt.name.value] = cls
        elif isinstance(stmt, cst.If):
            self.exec_if(stmt, env, ctx)
        elif isinstance(stmt, (cst.For, cst.While)):
            self.exec_loop(stmt, env, ctx)
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            self.exec_try(stmt, env, ctx)
        elif isinstance(stmt, cst.With):
            self.exec_with(stmt, env, ctx)
        elif isinstance(stmt, cst.Match):
            self.ev(stmt.subject, env, ctx)
            branches = [env.copy()]
            for case in stmt.cases:
                b = env.copy()
                self.exec_block(case.body, b, ctx)
                branches.append(b)
            env.merge_from(*branches)
        return ctx

    def exec_loop(self, stmt: Union[cst.For, cst.While], env: Env,
                  ctx: MeshCtx) -> None:
        over = self.ev(stmt.iter if isinstance(stmt, cst.For) else stmt.test, env, ctx)
        if isinstance(stmt, cst.For) and self._unrolled_loop(stmt, over, env, ctx):
            return
        before = env.copy()
        branch = env.copy()
        item = self.loop_item(over, ctx) if isinstance(stmt, cst.For) else UNKNOWN
        if isinstance(stmt, cst.For):
            self.assign(stmt.target, item, branch, ctx)
        self.exec_block(stmt.body, branch, ctx)
        merged = env.copy()
        merged.merge_from(before, branch)
        if self.loop_rerun_depth < _LOOP_RERUNS and any(
                merged.vars.get(k) is not v for k, v in before.vars.items()):
            # a value the loop carries changed: a later iteration sees the join, so
            # the body runs once more from it (its records then join to unknown)
            branch = merged.copy()
            if isinstance(stmt, cst.For):
                self.assign(stmt.target, item, branch, ctx)
            self.loop_rerun_depth += 1
            try:
                self.exec_block(stmt.body, branch, ctx)
            finally:
                self.loop_rerun_depth -= 1
        branches = [env.copy(), branch]
        if stmt.orelse is not None:
            other = branch.copy()
            self.exec_block(stmt.orelse.body, other, ctx)
            branches.append(other)
        env.merge_from(*branches)
        self.ended = False  # it may run no iteration

    def _unrolled_loop(self, stmt: cst.For, over: Value, env: Env, ctx: MeshCtx) -> bool:
        """``for name, value in params.items():`` over a few known items, outermost loop
        only, with no ``break``/``continue``/``yield``/``else``: the body runs once per
        item, so each entry of a spec table meets its own array. A ``return`` in it (a
        helper that returns at the first item a test picks) ends the loop at the first
        item whose run always returns: the later items are never run, and the loop
        always returns (``self.ended``)."""
        if self.loop_unroll_depth or stmt.orelse is not None or \
                self.memo(("jumps", stmt.body), lambda: _jumps(stmt.body, returns=False)):
            return False
        items = self.iter_items(over)
        if items is None or not 0 < len(items) <= _LOOP_UNROLL:
            return False
        branch = env.copy()
        ended = False
        self.loop_unroll_depth += 1
        try:
            for item in items:
                self.assign(stmt.target, item, branch, ctx)
                self.exec_block(stmt.body, branch, ctx)
                if self.ended:
                    ended = True
                    break
        finally:
            self.loop_unroll_depth -= 1
        env.merge_from(branch)
        self.ended = ended
        return True

    def exec_try(self, stmt: Union[cst.Try, cst.TryStar], env: Env,
                 ctx: MeshCtx) -> None:
        self.exec_block(stmt.body, env, ctx)
        branches = [env.copy()]
        for h in stmt.handlers:
            b = env.copy()
            if h.name is not None:
                self.assign(h.name.name, UNKNOWN, b, ctx)
            self.exec_block(h.body, b, ctx)
            branches.append(b)
        if stmt.orelse is not None:
            self.exec_block(stmt.orelse.body, branches[0], ctx)
        env.merge_from(*branches)
        if stmt.finalbody is not None:
            self.exec_block(stmt.finalbody.body, env, ctx)

    def exec_if(self, stmt: cst.If, env: Env, ctx: MeshCtx) -> None:
        test = stmt.test
        if (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name)
                and test.left.value == "__name__"):
            # the script's entry point runs when the script runs: no join
            self.exec_block(stmt.body, env, ctx)
            return
        # a test whose value is known (a helper evaluated for a call that passes
        # name="bias"): the values after it, and those returned, are the branch Python runs
        known = condition_truth(self, test, env, ctx)
        if not self.assume_defaults and any(
                isinstance(self.ev(base, env, ctx), ArrayVal)
                for base in self.memo(("shape reads", test), lambda: _shape_reads(test))):
            # a test of the array's own rank or shape (`if x.ndim == 3:`) is decided per
            # call: only the branch this call runs is checked (its twin is for other shapes)
            decided = truth(self.ev(test, env, ctx))
            if decided is not None:
                if decided:
                    self.exec_block(stmt.body, env, ctx)
                elif isinstance(stmt.orelse, cst.If):
                    self.exec_if(stmt.orelse, env, ctx)
                elif isinstance(stmt.orelse, cst.Else):
                    self.exec_block(stmt.orelse.body, env, ctx)
                return
        returns = self.returns if self.returns is not None else []
        n0 = len(returns)
        a = env.copy()
        self.dead_branches += known is False
        try:
            self.exec_block(stmt.body, a, ctx)
        finally:
            self.dead_branches -= known is False
        ended_a, n1 = self.ended, len(returns)
        b = env.copy()
        self.ended = False
        self.dead_branches += known is True
        try:
            if isinstance(stmt.orelse, cst.If):
                self.exec_if(stmt.orelse, b, ctx)
            elif isinstance(stmt.orelse, cst.Else):
                self.exec_block(stmt.orelse.body, b, ctx)
        finally:
            self.dead_branches -= known is True
        ended_b = self.ended
        # both branches are read (each has its sites; facts only where the branch may
        # run: a known test's other branch proves nothing), and the values after
        # (and returned) are those of the branch Python runs where the test is known
        env.merge_from(*((a,) if known else (b,) if known is False else (a, b)))
        if known:
            del returns[n1:]
        elif known is False:
            del returns[n0:n1]
        self.ended = ended_a if known else ended_b if known is False else ended_a and ended_b

    def exec_with(self, stmt: cst.With, env: Env, ctx: MeshCtx) -> None:
        inner = ctx
        for item in stmt.items:
            v = self.ev(item.item, env, ctx)
            entered: Optional[MeshCtx] = get_hook("enter")(self, v, item.item, inner)
            if entered is not None:
                inner = entered
            elif _is_raises(item.item):
                self.raises_blocks.append(stmt)
            if item.asname is not None:
                self.assign(item.asname.name, v if isinstance(v, MeshVal) else UNKNOWN, env, ctx)
        self.exec_block(stmt.body, env, inner)

    def exec_def(self, stmt: cst.FunctionDef, env: Env, ctx: MeshCtx) -> None:
        fv = FuncVal(stmt, stmt.name.value, env)
        self.register(fv)
        val: Value = fv
        for d in reversed(stmt.decorators):
            dec = self.ev(d.decorator, env, ctx)
            if dec is UNKNOWN and isinstance(d.decorator, cst.Name) \
                    and d.decorator.value in ("staticmethod", "classmethod", "property"):
                dec = QualName(d.decorator.value)  # the builtin: Cls.method() is followed
            val = get_hook("decorate")(self, dec, val, d.decorator, env, ctx)
        env.vars[stmt.name.value] = val

    def exec_small(self, small: cst.CSTNode, env: Env, ctx: MeshCtx) -> MeshCtx:
        if isinstance(small, cst.Assign):
            v = self.ev(small.value, env, ctx)
            for t in small.targets:
                self.assign(t.target, v, env, ctx)
            if isinstance(v, MeshContextVal) and v.sets_now:  # `_ = jax.set_mesh(mesh)`
                return get_hook("statement")(self, v, ctx) or ctx
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.assign(small.target, self.ev(small.value, env, ctx), env, ctx)
        elif isinstance(small, cst.AugAssign):
            v = self.ev(small.value, env, ctx)
            op = type(small.operator).__name__.replace("Assign", "")
            if isinstance(small.target, cst.Name):
                cur = env.lookup(small.target.value)
                env.vars[small.target.value] = self.binop(op, cur, v, small, ctx)
            elif isinstance(small.target, (cst.Attribute, cst.Subscript)):  # self.step += 1
                cur = self.ev(small.target, env, ctx)
                self.assign_part(small.target, self.binop(op, cur, v, small, ctx), env, ctx)
        elif isinstance(small, cst.Expr):
            v = self.ev(small.value, env, ctx)
            after: Optional[MeshCtx] = get_hook("statement")(self, v, ctx)
            if after is not None:
                return after
        elif isinstance(small, cst.Return):
            v = self.ev(small.value, env, ctx) if small.value is not None else Const(None)
            if self.returns is not None:
                self.returns.append((small, v))
        elif isinstance(small, cst.Import):
            for alias in small.names:
                full = dotted(alias.name)
                get_hook("reference")(self, self.profile.canonical(full), alias, "import")
                if alias.asname is not None:
                    self.assign(alias.asname.name, self.import_value(full), env, ctx)
                else:
                    top = full.split(".")[0]
                    env.vars[top] = self.import_value(top)
        elif isinstance(small, cst.ImportFrom):
            self.exec_import_from(small, env, ctx)
        elif isinstance(small, (cst.Raise, cst.Assert, cst.Del)):
            for child in small.children:
                if isinstance(child, cst.BaseExpression):
                    self.ev(child, env, ctx)
        return ctx

    def import_value(self, full: str) -> Value:
        if self.project is not None and self.project.has_module(full):
            return ProjectModule(full)
        return QualName(full)

    def exec_import_from(self, small: cst.ImportFrom, env: Env, ctx: MeshCtx) -> None:
        base = dotted(small.module) if small.module is not None else ""
        if small.relative:
            package = self.project is not None and self.project.is_package(self.module_name)
            base = relative_base(self.module_name, len(small.relative), base, package)
        if isinstance(small.names, cst.ImportStar):
            if self.project is not None and self.project.has_module(base):
                # what it reads: every public name (slices.STAR), not the whole text
                menv = self.project.module_env(base, self, looked_up=STAR)
                if menv is not None:
                    env.vars.update({k: v for k, v in menv.vars.items() if not k.startswith("_")})
            return
        for alias in small.names:
            name = dotted(alias.name)
            target = alias.asname.name if alias.asname is not None else alias.name
            full = f"{base}.{name}" if base else name
            get_hook("reference")(self, self.profile.canonical(full), alias, "import")
            value: Value
            if self.project is not None and self.project.has_module(full):
                value = ProjectModule(full)
            elif self.project is not None and self.project.has_module(base):
                # read from `base` at first use: a name imported and never read (a
                # package's re-exports) costs no read of its module
                value = LazyImport(self.project, base, name, once=not self.definitions_only)
            else:
                value = QualName(full)
            self.assign(target, value, env, ctx)

    def assign(self, target: cst.CSTNode, v: Value, env: Env, ctx: MeshCtx,
               record: bool = True) -> None:
        if isinstance(target, cst.Name):
            if target.value in self.memo(("rebound by name",), lambda: _declared_rebound(self.module)):
                v = UNKNOWN  # a function rebinds it (global/nonlocal): when, is not known here
            env.vars[target.value] = v
            if record and self.cur is not None and isinstance(v, ArrayVal) and not v.numpy:
                mesh = ctx.mesh if ctx.known and ctx.mesh is not None else v.mesh
                self.record("types", TypeRecord(target, target.value, v,
                                                mesh.names if mesh is not None else None))
        elif isinstance(target, (cst.Tuple, cst.List)):
            elems = target.elements
            v = as_sequence(v)  # `b, t, d = spec`: a PartitionSpec is a tuple
            starred = any(isinstance(e, cst.StarredElement) for e in elems)
            items = v.items if isinstance(v, TupleVal) and not starred and len(v.items) == len(elems) else None
            if isinstance(v, ArrayVal) and not starred and v.shape and v.shape[0] == len(elems):
                seq = self.iter_items(v)
                items = tuple(seq) if seq is not None else None
            for i, e in enumerate(elems):
                self.assign(e.value, items[i] if items is not None else UNKNOWN, env, ctx, record)
        elif isinstance(target, (cst.Attribute, cst.Subscript)):
            self.assign_part(target, v, env, ctx)

    def assign_part(self, target: Union[cst.Attribute, cst.Subscript], v: Value, env: Env,
                    ctx: MeshCtx) -> None:
        """``cfg.model.heads = v``, ``shardings["w"] = v``: the name the chain starts from
        is rebound to its value with that part replaced (an object or dict the source
        made; a part whose container is not known, or a key that is not constant, leaves
        the part it belongs to unknown)."""
        path: List[Any] = []
        node: cst.BaseExpression = target
        while isinstance(node, (cst.Attribute, cst.Subscript)):
            if isinstance(node, cst.Attribute):
                path.append((True, node.attr.value))
            else:
                key = self.ev(node.slice[0].slice.value, env, ctx) \
                    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
                    else UNKNOWN
                path.append((False, key.value if isinstance(key, Const) else _NO_KEY))
            node = node.value
        if not isinstance(node, cst.Name):
            self.ev(node, env, ctx)
            return
        root = env.lookup(node.value)
        replaced = _replaced(root, path[::-1], v)
        if replaced is not None:
            env.vars[node.value] = replaced


def _declared_rebound(module: cst.Module) -> frozenset:
    """The names some function of the module declares ``global`` or ``nonlocal``: the
    function may rebind them whenever it runs (a test's ``global BATCH_SIZE; BATCH_SIZE =
    8`` before it calls the step that reads it), so what any assignment binds to them is
    unknown elsewhere. A hand-written walk of the statements."""
    names: set = set()
    todo: list = list(module.body)
    while todo:
        s = todo.pop()
        if isinstance(s, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in s.body:
                if isinstance(small, (cst.Global, cst.Nonlocal)):
                    names.update(n.name.value for n in small.names)
        elif isinstance(s, cst.IndentedBlock):
            todo.extend(s.body)
        elif isinstance(s, cst.BaseCompoundStatement):
            todo.extend(compound_blocks(s))
    return frozenset(names)


_NO_KEY = object()  # a subscript whose key is not a constant


def _replaced(container: Value, path: List[Any], v: Value) -> Optional[Value]:
    """``container`` with the part at ``path`` ((is_attribute, name or key), outermost
    first) set to ``v``; None where the container is not one the interpreter follows
    (its value stays what it was: an array's elements, say)."""
    if not path:
        return v
    (is_attr, key), rest = path[0], path[1:]
    if is_attr:
        if not isinstance(container, InstanceVal):
            return None
        child = dict(container.given).get(key, UNKNOWN)
        new = _replaced(child, rest, v) if rest else v
        return with_attribute(container, key, UNKNOWN if new is None else new)
    if isinstance(container, DictVal):
        if key is _NO_KEY:
            return UNKNOWN
        new = _replaced(container.get(key), rest, v) if rest else v
        pairs = list(container.items)
        merge_item(pairs, key, UNKNOWN if new is None else new)
        return DictVal(tuple(pairs))
    if isinstance(container, TupleVal) and container.is_list:
        if not isinstance(key, int) or not -len(container.items) <= key < len(container.items):
            return UNKNOWN
        items = list(container.items)
        new = _replaced(items[key], rest, v) if rest else v
        items[key] = UNKNOWN if new is None else new
        return TupleVal(tuple(items), True)
    return None


# class decorators that return the class they are given (registering it, or adding a
# dataclass's methods); any other may return something else
_CLASS_KEEPING_DECORATORS = frozenset({
    "dataclass", "register_pytree_node_class", "register_dataclass", "register_static",
    "total_ordering", "final", "unique", "runtime_checkable", "pytree_dataclass"})


def _keeps_class(d: cst.BaseExpression) -> bool:
    name = dotted(d.func if isinstance(d, cst.Call) else d) or ""
    return name.rsplit(".", 1)[-1] in _CLASS_KEEPING_DECORATORS


_ENDS = frozenset({cst.Return, cst.Raise})  # exact types: isinstance goes through ABCMeta
# the statements whose always returning or raising (``self.ended``) ends their block: not a
# ``with`` (a context manager may swallow what its body raises: ``pytest.raises``) but
# in ``shardcheck specs``, nor a ``try``
_ENDING = (cst.SimpleStatementLine, cst.If, cst.For)


def _jumps(body: cst.CSTNode, returns: bool = True) -> bool:
    """Whether a loop body may leave an iteration early: a break, continue, return
    (unless ``returns`` is False) or yield in it, outside functions and classes defined
    in it (a hand-written walk: a libcst visitor over every node of every loop body cost
    seconds on large trees)."""
    if isinstance(body, (cst.Break, cst.Continue, cst.Yield)) or \
            (returns and isinstance(body, cst.Return)):
        return True
    if isinstance(body, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return False
    if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite, cst.SimpleStatementLine)):
        return any(_jumps(s, returns) for s in body.body)
    if isinstance(body, (cst.Expr, cst.Assign, cst.AnnAssign, cst.AugAssign)):
        return body.value is not None and has_yield(body.value)
    if isinstance(body, cst.BaseCompoundStatement):
        return any(_jumps(c, returns) for c in compound_blocks(body))
    return False


def _shape_reads(test: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The names (and attribute chains) whose ``.ndim``, ``.shape`` or ``.size`` a test
    reads: ``x`` in ``x.ndim == 3``, ``len(x.shape) > 2``, ``self.w.shape[-1] % 128``
    (through comparisons, arithmetic, ``and``/``or``/``not``, calls and subscripts)."""
    out: List[cst.BaseExpression] = []
    todo: List[Any] = [test]
    while todo:
        n = todo.pop()
        if isinstance(n, cst.Attribute):
            if n.attr.value in ("ndim", "shape", "size") and dotted(n.value):  # a name or chain
                out.append(n.value)
            todo.append(n.value)
        elif isinstance(n, cst.Comparison):
            todo.append(n.left)
            todo.extend(c.comparator for c in n.comparisons)
        elif isinstance(n, (cst.BinaryOperation, cst.BooleanOperation)):
            todo.extend((n.left, n.right))
        elif isinstance(n, cst.UnaryOperation):
            todo.append(n.expression)
        elif isinstance(n, cst.Call):
            todo.append(n.func)
            todo.extend(a.value for a in n.args)
        elif isinstance(n, cst.Subscript):
            todo.append(n.value)
            todo.extend(s.slice.value for s in n.slice if isinstance(s.slice, cst.Index))
        elif isinstance(n, (cst.Tuple, cst.List)):
            todo.extend(el.value for el in n.elements)
    return out[::-1]


def _is_raises(expr: cst.BaseExpression) -> bool:
    if not isinstance(expr, cst.Call):
        return False
    f = expr.func
    name = f.attr.value if isinstance(f, cst.Attribute) else (
        f.value if isinstance(f, cst.Name) else "")
    return name in _RAISES

