"""Infrastructure that knows nothing of the game: the bottom layer (docs/ARCHITECTURE.md).

- ``threads``: when numba kernels run on threads, and in how many tasks;
- ``kernel_cache``: numba's on-disk kernel cache, recompiling a damaged file;
- ``seeds``: seed checks and fresh seeds;
- ``provenance``: the git commit that results came from;
- ``ray_cluster``: Ray for a run, joined at an address or started on this machine.
"""
