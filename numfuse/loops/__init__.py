"""Lowering: a KernelSpec (spec.py, the planner's handoff) becomes statements over the domain's
axes (lower.py, handing collapse.py an Evaluated kernel), whose axes collapse into the loops of a
LoopNest (loopnest.py) with the target's choices (strategy.py). Imports ir only."""
