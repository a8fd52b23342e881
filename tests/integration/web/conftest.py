"""One ``scorch run`` serving the page, one Chromium and one page for every web test module.

Package scope: the page modules share them (a second installation would cost its boot
again). The last module ends with the test that closes the page; the browser starts
with the first that needs one (``test_hosts_page.py`` runs a host's page of its own).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.hosts.harness import Namespace, namespaces_allowed
from tests.support.skips import missing, module
from tests.support.web.harness import BROWSER_ARGS, CHROMIUM, Dialogs, Served


@pytest.fixture(scope="package")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    why = namespaces_allowed()
    if why is not None:
        missing(why)
    ns = Namespace(9)
    try:
        served = Served(tmp_path_factory.mktemp("web"), ns)
        try:
            yield served
        finally:
            served.api.close()
            served.mcp.close()
            assert served.run.stop() == 0, served.run.tail()
    finally:
        ns.delete()


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    playwright_api = module("playwright.sync_api", "Playwright (the dev extra: make test)")
    if not CHROMIUM.exists():
        missing(f"{CHROMIUM} (make test installs Debian's chromium)")
    with playwright_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="package")
def dialogs() -> Dialogs:
    return Dialogs()


@pytest.fixture(scope="package")
def page(served: Served, browser: Any, dialogs: Dialogs) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.on("dialog", dialogs.answer)
    page.goto(served.url + f"?token={served.token}")
    yield page
    context.close()
