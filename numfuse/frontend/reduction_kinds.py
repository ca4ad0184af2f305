"""NumPy's reductions that are one primitive each, by name and by ufunc: tables the rules
(numpy_reductions.py) and the list of complex operations (numpy_complex.py) both read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Reduction:
    """A NumPy reduction that is one primitive: its IR primitive and how NumPy picks its dtype."""

    numpy_name: str
    prim: str
    stand_in: Callable  # NumPy's own function, run on a stand-in to get dtype and errors
    converts_to_bool: bool = False


REDUCTION_KINDS = {
    "sum": Reduction("sum", "reduce_sum", np.sum),
    "prod": Reduction("prod", "reduce_prod", np.prod),
    "max": Reduction("max", "reduce_max", np.max),
    "min": Reduction("min", "reduce_min", np.min),
    "any": Reduction("any", "reduce_or", np.any, converts_to_bool=True),
    "all": Reduction("all", "reduce_and", np.all, converts_to_bool=True),
    "mean": Reduction("mean", "reduce_sum", np.mean),
    # np.fmax.reduce: NaN loses unless the whole slice is NaN (np.nanmax)
    "fmax": Reduction("fmax.reduce", "reduce_fmax", np.fmax.reduce),
    "fmin": Reduction("fmin.reduce", "reduce_fmin", np.fmin.reduce),
}


UFUNC_REDUCTIONS = {
    np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
    np.logical_or: "any", np.logical_and: "all", np.fmax: "fmax", np.fmin: "fmin",
}
