"""What every target's executable shares: generated kernel modules as files (kernel_files.py),
scalar arguments cast as NumPy casts them (scalars.py), library results checked against the
plan (library_results.py)."""
