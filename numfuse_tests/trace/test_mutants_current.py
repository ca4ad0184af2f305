"""The planted bugs of `python -m numfuse_tests.mutants` still apply: each one's text is in
its file exactly once, and the tests said to catch it exist (else the script reports STALE)."""

import pytest

from numfuse_tests import mutants


@pytest.mark.parametrize("number", range(1, len(mutants.MUTANTS) + 1))
def test_each_mutant_applies_to_todays_source(number):
    mutant = mutants.MUTANTS[number - 1]
    assert (mutants.ROOT / mutant.path).read_text().count(mutant.old) == 1, mutant.what
    for test in mutant.tests:
        path, _, name = test.partition("::")
        text = (mutants.ROOT / path).read_text()
        assert not name or f"def {name}(" in text, test
