"""The README's and the docs' code runs as printed (numfuse_tests/docs.py): every ```python
block, and every output or listing shown after one or after a line naming its code. The listings
are the CUDA target's; `python -m numfuse_tests.docs --update` regenerates them."""

import os

import pytest

from numfuse_tests import docs


@pytest.mark.parametrize("name", docs.FILES)
def test_the_docs_code_runs_as_printed(name):
    if os.environ.get("NUMFUSE_TARGET") == "cpu":
        pytest.skip("the docs' listings are the CUDA target's")
    problems = docs.check([name])
    assert not problems, "\n\n".join(problems) + (
        "\n\n(python -m numfuse_tests.docs --update writes what the blocks print into the docs)")
