"""Reading NumPy's floating-point error state at a call (frontend/fp_modes.py): which categories
stop a program, as each np.errstate and np.seterr sets them, and which arguments are on the host."""

import numpy as np
import pytest

from numfuse.frontend import fp_modes


def test_numpys_defaults_stop_nothing():
    assert np.geterr()["divide"] == "warn"
    assert fp_modes.stopping_categories() == ()


@pytest.mark.parametrize("modes, stopping", [
    ({"divide": "raise"}, ("divide",)),
    ({"all": "raise"}, ("divide", "over", "under", "invalid")),
    ({"over": "log", "invalid": "print"}, ("over", "invalid")),
    ({"under": "call"}, ("under",)),
    ({"all": "warn"}, ()),
    ({"all": "ignore"}, ()),
])
def test_each_state_is_read_as_it_changes(modes, stopping):
    before = fp_modes.stopping_categories()
    with np.errstate(**modes):
        assert fp_modes.stopping_categories() == stopping
        with np.errstate(all="ignore"):  # a nested state, then back
            assert fp_modes.stopping_categories() == ()
        assert fp_modes.stopping_categories() == stopping
    assert fp_modes.stopping_categories() == before


def test_seterr_is_read_too():
    old = np.seterr(invalid="raise")
    try:
        assert fp_modes.stopping_categories() == ("invalid",)
    finally:
        np.seterr(**old)
    assert fp_modes.stopping_categories() == ()


class _Library:
    def __init__(self, on_host):
        self.on_host = on_host


def test_device_arrays_anywhere_in_the_arguments_are_found():
    device = object()

    def library_of(value):
        return _Library(False) if value is device else None

    assert fp_modes.host_only((np.ones(2), 3.0, [np.ones(1)], {"a": np.ones(1)}), library_of)
    assert not fp_modes.host_only((np.ones(2), device), library_of)
    assert not fp_modes.host_only(([np.ones(1), device],), library_of)
    assert not fp_modes.host_only(({"a": device},), library_of)
