"""The table of supported operations, generated from the op table and the NumPy API registry.

    python -m numfuse.support      # prints the markdown table that README.md and docs/ embed

A trace-tier test fails when the copy in README.md is stale.
"""

from __future__ import annotations


from ..ir.dtypes import COMPLEX, REAL
from .numpy_api import FUNCTIONS, SUPPORTED_ATTRIBUTES, SUPPORTED_METHODS, function_name
from .numpy_complex import complex_operations
from ..ir.ops import BY_UFUNC, MULTI_OUTPUT, REDUCTIONS

_OPERATORS = r"`+ - * / // % **`, `divmod()`, unary `- + abs() ~`, `== != < <= > >=`, `&`, `\|`, `^`, `<<`, `>>`, in-place `+=` `-=` `<<=` ... (on locals, arguments and any view of them)"

_GROUPS = [
    ("Arithmetic", ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod", "power",
                    "negative", "positive", "absolute", "fabs", "square", "reciprocal", "sign", "conjugate",
                    "divmod", "gcd", "lcm"]),
    ("Comparison and selection", ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                                  "maximum", "minimum", "fmax", "fmin"]),
    ("Bitwise and logical", ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift",
                             "bitwise_count", "logical_and", "logical_or", "logical_xor", "logical_not"]),
    ("Exponents and logarithms", ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp",
                                  "logaddexp2", "sqrt", "cbrt"]),
    ("Trigonometric and hyperbolic", ["sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "hypot",
                                      "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "copysign",
                                      "deg2rad", "radians", "rad2deg", "degrees"]),
    ("Rounding", ["floor", "ceil", "trunc", "rint", "modf"]),
    ("Classification", ["isnan", "isinf", "isfinite", "signbit", "heaviside"]),
    ("Floating-point representation", ["frexp", "ldexp", "nextafter", "spacing"]),
]


def _dtype_names() -> str:
    complex_ops = ", ".join(f"`{name}`" for name in complex_operations())
    return (
        f"{', '.join(str(d) for d in REAL)} (results follow NumPy 2 promotion, NEP 50); "
        f"{', '.join(str(d) for d in COMPLEX)} with {complex_ops} and `.real`, `.imag` (any other "
        "operation on them raises `UnsupportedError`)"
    )


def supported_operations_markdown() -> str:
    ufuncs = {u.__name__ for u in BY_UFUNC} | {u.__name__ for u in MULTI_OUTPUT}
    grouped = {name for _, names in _GROUPS for name in names}
    missing = sorted(ufuncs - grouped)
    assert not missing, f"ufuncs missing from the docs groups: {missing}"
    lines = ["| kind | operations |", "|---|---|"]
    lines.append(f"| Python operators | {_OPERATORS} |")
    for title, names in _GROUPS:
        lines.append(f"| {title} (ufuncs) | {', '.join(f'`np.{n}`' for n in names if n in ufuncs)} |")
    functions = sorted(function_name(f) for f in FUNCTIONS)
    lines.append(f"| NumPy functions | {', '.join(f'`{n}`' for n in dict.fromkeys(functions))} |")
    reductions = sorted(f"`np.{op.ufunc.__name__}.reduce`" for op in REDUCTIONS.values()
                        if op.ufunc is not None and not op.scan)
    lines.append(f"| Ufunc reductions | {', '.join(reductions)} |")
    lines.append("| Other ufunc methods | `ufunc.outer` of every binary ufunc above; `np.add.at`, "
                 "`np.subtract.at`, `np.multiply.at`, `np.maximum.at`, `np.minimum.at` |")
    lines.append(f"| Array methods | {', '.join(f'`.{m}()`' for m in SUPPORTED_METHODS)} |")
    lines.append(f"| Array attributes | {', '.join(f'`.{a}`' for a in SUPPORTED_ATTRIBUTES)} |")
    lines.append(
        "| Indexing | basic indexing as views: `x[1:-1, ::2]`, `x[0]`, `x[::-1]`, `None`/`np.newaxis`, "
        "`...`; item assignment `x[idx] = v` (locals, arguments, and views of them: slices, `.T`, "
        "`reshape`, `ravel`, `np.newaxis`, `swapaxes`, `moveaxis`, `expand_dims`, `squeeze`); "
        "integer-array indexing as gathers (`x[idx]`, `x[:, [0, 2]]`, `x[i, j]`, `x[k]` for a traced "
        "integer); boolean masks known when traced (`x[[True, False, True]]`) as their nonzero positions; "
        "writes through index arrays as scatters (`x[idx] = v`, `x[idx, 1:] = v`, into views "
        "too); `x[mask] = value` for one value, and for one value per selected element at a graph break |"
    )
    lines.append(f"| Dtypes | {_dtype_names()} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(supported_operations_markdown())
