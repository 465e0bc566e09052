"""The reference packages the metrics are compared against (crowd-kit, ppi-python): a test
skips without one, except in CI (CI=true), where the comparison must run."""

import importlib
import importlib.util
import os
import sys
import types

import pytest


def reference(module: str) -> types.ModuleType:
    if os.environ.get("CI", "").lower() == "true":
        return importlib.import_module(module)
    return pytest.importorskip(module)


def ppi_py() -> types.ModuleType:
    """The authors' PPI package. It imports numba only to compile its regression helpers,
    which the mean compared here never calls; the dev install leaves numba (and llvmlite,
    200 MB) out, so the identity stands in for `njit` while the package is imported."""
    if "ppi_py" in sys.modules or importlib.util.find_spec("numba") is not None:
        return reference("ppi_py")
    stand_in = types.ModuleType("numba")
    stand_in.njit = lambda *args, **_: args[0] if args and callable(args[0]) else (lambda f: f)
    sys.modules["numba"] = stand_in
    try:
        return reference("ppi_py")
    finally:
        del sys.modules["numba"]
