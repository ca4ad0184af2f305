"""Tracing: a user's NumPy function becomes an ir.Graph.

tracer.py holds the TraceContext; proxy.py the Tracer that stands in for an array and receives
NumPy's protocols; numpy_*.py are NumPy's functions as rules that bind equations; arguments.py,
captures.py and aliasing.py decide what a call's signature is; graph_breaks.py runs a function
that needs values in segments. Imports ir only (and errors, debug)."""
