"""Correctness at scale (benchmarks/egraph_scale.py times these paths; nothing here asserts a time).

A generated 1,000-op graph goes through lift -> saturate -> extract: 32 distinct variants, each
lowered back to FX, must compute what the original computes. The fast paths are checked against
the plain ones they replace: chunked program loading (terms.add_program) against one `let` per
node (terms.program_text), and the heap-based class heights against the fixpoint sweep.
"""
from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from benchmarks.graphs import random_graph, run_graph  # noqa: E402
from eqsat_test.lowering.lift import lift_fx  # noqa: E402
from eqsat_test.lowering.lower import to_fx  # noqa: E402
from eqsat_test.rewrite.extract import ENode, _heights, extract_variants, read_egraph  # noqa: E402
from eqsat_test.rewrite.terms import add_program, new_egraph, parse_call_fn, program_calls, program_text, run_text  # noqa: E402


@pytest.fixture(scope="module")
def library():
    from eqsat_test.rewrite.compile_rules import compile_rules
    from eqsat_test.rewrite.ruledsl import load_rules
    compiled, _ = compile_rules(load_rules(None))
    return compiled


def _close(a, b) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.allclose(a, b, rtol=1e-3, atol=1e-4, equal_nan=True))


def test_random_graph_has_the_requested_ops_all_reachable():
    gm, inputs = random_graph(300, seed=1)
    p = lift_fx(gm).program
    assert 290 <= p.num_ops <= 300  # equal nodes are shared by lifting
    assert all(torch.isfinite(o).all() for o in run_graph(gm, inputs))


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_1000_op_graph_gives_32_distinct_variants_that_compute_the_same(library):
    from eqsat_test.rewrite.generate import rules_applied
    from eqsat_test.rewrite.saturate import Budget, saturate

    gm, inputs = random_graph(1000, seed=0)
    lifted = lift_fx(gm)
    prog = lifted.program
    assert prog.num_ops >= 990
    sat = saturate(prog, library, Budget(iterations=1))
    assert sat.iterations == 1 and sat.enodes > 3 * 1000
    ec = read_egraph(sat.lifted.egraph, sat.lifted.root, prog, sat.lifted.node_names)
    ex = extract_variants(ec, 32, seed=0, max_ops=prog.num_ops * 4 + 16, exclude={prog.key()})
    del sat.lifted.egraph
    assert len(ex.variants) == 32
    keys = {p.key() for p, _ in ex.variants}
    assert len(keys) == 32 and prog.key() not in keys
    want = run_graph(gm, inputs)
    cache: dict = {}
    attributed = 0
    for p, _ in ex.variants:
        got = run_graph(to_fx(p, lifted.input_names), inputs)
        assert len(got) == len(want)
        assert all(_close(a, b) for a, b in zip(want, got)), "a variant computes something else"
        attributed += bool(rules_applied(p, prog, library, cache))
    assert attributed == 32


def test_chunked_program_loading_builds_the_same_egraph_as_one_let_per_node():
    gm, _ = random_graph(700, seed=2)
    p = lift_fx(gm).program

    def signature(eg, root):
        ec = read_egraph(eg, root, p, {})
        sizes = sorted((k, v) for k, v in run_text(eg, "(print-size)")[0].sizes if parse_call_fn(k) or k in
                       ("T_cons", "T_input", "T_kw", "T_lit", "T_nil", "T_seq", "rank", "dtype", "lit_is"))
        memo: dict = {}

        def term(c):  # each class's original term, by structure (class ids differ between graphs)
            if c not in memo:
                n = ec.classes[c][ec.original[c]]
                memo[c] = hash((n.fn, n.prim, tuple(term(k) for k in n.children)))
            return memo[c]

        for c in sorted(ec.classes, key=lambda c: ec.height[c]):  # children first: no deep recursion
            term(c)
        return sizes, sorted(memo.values()), term(ec.root), len(ec.original)

    a = new_egraph(program_calls(p))
    names = add_program(a, p, chunk=64)
    b = new_egraph(program_calls(p))
    text, names_b = program_text(p, {})
    run_text(b, text)
    assert signature(a, names[p.output]) == signature(b, names_b[p.output])


def test_heap_heights_equal_the_fixpoint_sweep():
    def sweep(classes):
        inf = 1 << 30
        h = {c: inf for c in classes}
        changed = True
        while changed:
            changed = False
            for c, nodes in classes.items():
                best = min([1 + max((h.get(k, inf) for k in n.children), default=-1) for n in nodes] + [h[c]])
                if best < h[c]:
                    h[c], changed = best, True
        return h

    rng = random.Random(0)
    for _ in range(200):
        n = rng.randint(1, 30)
        classes = {c: [ENode("call", "f", tuple(rng.randrange(n + 2) for _ in range(rng.randint(0, 3))))
                       for _ in range(rng.randint(1, 3))] for c in range(n)}
        assert _heights(classes) == sweep(classes)
