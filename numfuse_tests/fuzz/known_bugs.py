"""Constructs the generator leaves out because numfuse gets them wrong today.

Each predicate says whether a candidate operation would hit one known numfuse bug; the
generator then skips it, so that CI stays green and every other program is still checked. When
a bug is fixed, delete its predicate (and its call): the fuzzer then covers the construct again.
A small repro of each is in its docstring.
"""

from __future__ import annotations

# Fixed since they were found (their predicates deleted): a Python int to a negative Python int
# power, Python-scalar s ** 2 giving a NumPy scalar, uint64-vs-signed comparisons giving
# np.longlong, out-of-range clip bounds, the round of a 0-d integer; and, from the library-call
# fuzzing, a sort or scan of a computed empty array, a scan or argsort of a 0-d value along an
# axis, a library call after one reading a local written in place, a masked write into a
# copy of a flattening cumsum; then a flattening scan of a computed array, a masked write of
# a signed value into uint64, np.concatenate of a Python scalar, x[..., i] of a 0-d index, an
# einsum of a size one against a size zero, a scan of a scalar argument, and a library call
# of a computed empty array read by a kernel too. A new one gets a predicate here, called from
# strategies.py, and a repro in test_fuzz_programs.KNOWN_BUGS.
