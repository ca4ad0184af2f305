"""Every program of the corpus gives NumPy's results, types, shapes and dtypes."""

import numpy as np
import pytest

from numfuse_tests.helpers import check
from numfuse_tests.programs import PROGRAMS


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_matches_numpy(program):
    rng = np.random.default_rng(1234)
    check(program.fn, *program.args(rng), reduced=program.reduced)
