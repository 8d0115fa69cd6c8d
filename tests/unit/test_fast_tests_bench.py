"""benchmarks/fast_tests.py times two checkouts on the tests both have: each arm leaves out, by id, the tests the other lacks."""
from benchmarks.fast_tests import deselected


def test_each_arm_leaves_out_by_id_the_tests_the_other_lacks():
    older = {"tests/a.py::test_x", "tests/a.py::test_y[1 2]"}
    this = older | {"tests/b.py::test_new"}
    assert deselected(this, older) == ["--deselect", "tests/b.py::test_new"]
    assert deselected(older, this) == []
    assert deselected(older, {"tests/a.py::test_x"}) == ["--deselect", "tests/a.py::test_y[1 2]"]
