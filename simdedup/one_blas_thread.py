"""Imported by the command line before anything imports numpy: simdedup does no multi-threaded
linear algebra, and OpenBLAS's thread pool would only double numpy's import time (0.05 to 0.07 s
of every run) and sit beside the -j worker processes. OpenBLAS reads the variable when numpy is
first imported, so it is set here, ahead of the command line's other imports; a value already
set is kept."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
