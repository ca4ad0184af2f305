"""Scalar arguments cast as NumPy casts them, for every target's executable."""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ..errors import ScalarOutOfRange


def scalar_casts(plan) -> list[tuple[int, np.dtype]]:
    """(input position, dtype) for every dtype each scalar argument is used in."""
    position = {v: i for i, v in enumerate(plan.graph.inputs) if i in plan.scalar_inputs}
    casts = {(i, v.aval.dtype) for v, i in position.items()}
    for eqn in plan.graph.eqns:
        if eqn.prim == "convert" and eqn.inputs[0] in position:
            casts.add((position[eqn.inputs[0]], eqn.out.aval.dtype))
    return sorted(casts, key=lambda c: (c[0], c[1].str))


@functools.lru_cache(maxsize=None)
def scalar_cast(dtype: np.dtype) -> Callable[[Any], Any]:
    """The cast of a scalar argument to `dtype` that NumPy's cast of an array makes: a complex
    value cast to a real dtype keeps its real part (np.float32(1j) itself refuses). One per
    dtype, made once: the full path casts every scalar at every call."""
    make = dtype.type
    if dtype.kind not in "iuf":
        return make

    def cast(value):
        return make(value.real if isinstance(value, (complex, np.complexfloating)) else value)

    return cast


def cast_scalars(casts, values) -> dict:
    """Every scalar argument cast to each dtype it is used in ((position, dtype) -> value), as
    each executable's full path casts them; a Python int out of a dtype's range raises
    ScalarOutOfRange (the call is traced again with it static)."""
    scalars = {}
    for i, dtype in casts:
        try:
            scalars[i, dtype] = scalar_cast(dtype)(values[i])
        except OverflowError:
            raise ScalarOutOfRange(i) from None
    return scalars
