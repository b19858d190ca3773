"""The interpreter's walks over statements: where a loop may be left early (the loop
unroller's guard) and what an `if` test reads the shape of."""

import textwrap


def test_a_loop_body_jumps_where_python_may_leave_the_iteration_early():
    """``_jumps`` (the loop unroller's guard): break/continue/return/yield in any block
    a statement runs (elif, else, except, finally, match cases), not in a function or
    class the body defines."""
    import libcst as cst
    from shardcheck.analyzer.interp.statements import _jumps

    def jumps(body: str) -> bool:
        loop = cst.parse_module(f"for i in x:\n{textwrap.indent(body, '    ')}").body[0]
        return _jumps(loop.body)

    assert jumps("if a:\n    pass\nelif b:\n    break\n")
    assert jumps("try:\n    f()\nexcept E:\n    continue\n")
    assert jumps("try:\n    f()\nfinally:\n    return 1\n")
    assert jumps("match v:\n    case 1:\n        break\n    case _:\n        pass\n")
    assert jumps("y = yield i\n") and jumps("with m:\n    f((yield))\n")
    assert not jumps("match v:\n    case 1:\n        f()\n")
    assert not jumps("def g():\n    return 1\nclass C:\n    def h(self):\n        return 2\n")
    assert not jumps("f(lambda: (yield))\n")
    assert not jumps("while b:\n    pass\nelse:\n    g()\n")


def test_an_if_test_reads_the_shape_of_the_names_it_tests():
    import libcst as cst
    from shardcheck.analyzer.interp.statements import _shape_reads

    def reads(test: str):
        return [cst.Module([]).code_for_node(n) for n in _shape_reads(cst.parse_expression(test))]

    assert reads("x.ndim == 3") == ["x"]
    assert reads("len(x.shape) > 2 and not self.w.shape[-1] % 128") == ["x", "self.w"]
    assert reads("x.size in (1, 2)") == ["x"]
    assert reads("cfg.n == 3") == [] and reads("f(x).ndim == 3") == []
