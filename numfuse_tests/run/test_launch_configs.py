"""Every kernel is correct for any grid and block size: grid-stride and block-stride loops, and a
tree reduction over any power-of-two block. Runs the corpus under several launch shapes."""

import numpy as np
import pytest

import numfuse.targets.cuda.launch_model as launch
from numfuse.targets.cuda.device import backend
from numfuse_tests.helpers import check
from numfuse_tests.programs import PROGRAMS

SELECTED = ["quickstart", "row_reductions", "column_reductions", "full_reductions", "three_d",
            "broadcast_outputs", "epilogue", "int_reductions", "nan_cases"]


@pytest.mark.skipif(not backend().simulated, reason="launch shapes are forced on the simulator only")
@pytest.mark.parametrize("grid,block", [(1, 1), (1, 2), (3, 4), (2, 32), (5, 8)])
@pytest.mark.parametrize("name", SELECTED)
def test_any_launch_shape(monkeypatch, name, grid, block):
    monkeypatch.setattr(launch, "SIM_GRID", grid)
    monkeypatch.setattr(launch, "SIM_BLOCK", block)
    program = next(p for p in PROGRAMS if p.name == name)
    check(program.fn, *program.args(np.random.default_rng(7)), reduced=program.reduced)
