"""The expression graph (graph.py) and what it is made of: the op registry (ops.py) with each
op's kind and scalar implementation (scalar_impl*.py), the primitives' shape and dtype rules
(primitives.py, with NumPy deciding promotion, dtypes.py), library calls (library_ops.py), and
the index maps that views and gathers read through (viewmaps.py, indexing.py).

The first stage: it imports no other stage."""

from .graph import Atom, Aval, Eqn, Graph, Literal, SizeConst, SizeValue, Var, check_graph, format_graph, var_names

__all__ = ["Atom", "Aval", "Eqn", "Graph", "Literal", "SizeConst", "SizeValue", "Var", "check_graph", "format_graph",
           "var_names"]
