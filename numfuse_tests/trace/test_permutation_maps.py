"""A transpose's index map uses the inverse of its permutation (the result's axis k is the
operand's axis perm[k], so the operand is read at the result's index permuted back): with a
permutation that is not its own inverse and axes that cannot be merged, the text shows it."""

import numpy as np

import numfuse


def test_a_four_axis_permutation_reads_its_operand_at_the_inverse_map():
    x = np.zeros((2, 3, 4, 5))
    nest = numfuse.jit(lambda x: x.transpose(1, 3, 0, 2) * 2).plan(x).kernels[0].nest
    assert str(nest) == """\
kernel nf_pw_multiply  pointwise[2d]
  in  in_a:f64[2,3,4,5]  const0:f64=2.0
  out out_c:f64[3,5,2,4]
  for i0 < n0:  (n0=3)
    for i1 < n1:  (n1=5)
      for i2 < n2:  (n2=2)
        for i3 < n3:  (n3=4)
          v0 = load in_a[i2, i0, i3, i1]
          v1:f64 = multiply v0 const0
          store out_c[i0, i1, i2, i3] = v1"""


def test_moveaxis_reads_at_the_inverse_map():
    x = np.zeros((2, 3, 4, 5))
    nest = numfuse.jit(lambda x: np.moveaxis(x, 0, 2)[:, ::2] + 1).plan(x).kernels[0].nest
    load = next(line.strip() for line in str(nest).splitlines() if "load" in line)
    # moveaxis(x, 0, 2) has axes (1, 2, 0, 3) of x: its point (i0, i1, i2, i3) is x[i2, i0, i1, i3].
    assert load == "v0 = load in_a[i2, i0, 2*i1, i3]", str(nest)
