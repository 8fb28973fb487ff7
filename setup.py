"""Compile the kernels while the wheel is built, so that the first command after ``pip install .``
loads them (in milliseconds) instead of compiling them (about a minute): the machine code is
written into the package's cache folder (``simdedup/__pycache__/simdedup-2``, see
:mod:`simdedup.cache`) and ships in the wheel. It is keyed by the CPU, Python and llvmlite, so a
wheel built on another machine simply brings files this one does not read.

Not for editable installs (the source folder's cache fills on first use), nor with
``SIMDEDUP_PREPARE=0`` (a wheel built to be copied elsewhere). A failure here never fails the
build: the first run then compiles what is missing.
"""

import os
import subprocess
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithKernels(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False) or os.environ.get("SIMDEDUP_PREPARE", "1") == "0":
            return
        build_lib = os.path.abspath(self.build_lib)
        with tempfile.TemporaryDirectory() as elsewhere:
            environment = dict(os.environ)
            # the build environment's packages come through PYTHONPATH too: add to it, never replace it
            environment["PYTHONPATH"] = os.pathsep.join(filter(None, [build_lib, environment.get("PYTHONPATH")]))
            environment["XDG_CACHE_HOME"] = elsewhere  # the user's own cache is not the wheel's
            self.announce("compiling simdedup's kernels (a few minutes, once)", level=2)
            try:
                subprocess.run(  # in build_lib: -m puts the working directory first on the path
                    [sys.executable, "-m", "simdedup.kernels.prepare"], cwd=build_lib, env=environment, check=True
                )
            except (OSError, subprocess.CalledProcessError) as exc:
                self.warn(f"simdedup's kernels were not all compiled ({exc}); the first run compiles the rest")


setup(cmdclass={"build_py": BuildWithKernels})
