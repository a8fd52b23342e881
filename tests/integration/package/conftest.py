"""The wheel and sdist, built once for the package and bundle tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.packaging import build_dist


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """scorch's wheel, built by ``python -m build`` from this checkout (its sdist beside it)."""
    return build_dist(tmp_path_factory.mktemp("dist"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
