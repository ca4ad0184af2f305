"""The fusion planner: an ir.Graph becomes an ordered Plan of kernels (each a KernelSpec lowered
to a LoopNest) and library steps, every refusal to fuse with its reason. The planner asks lowering
(loops/) whether a value can join a kernel, as nvFuser's schedulers are asked whether they can
schedule a fusion, so this stage comes after loops/. Imports ir and loops."""
