"""The views' real browser (Debian's chromium through Playwright) for the page test here."""

from tests.views.conftest import browser  # noqa: F401 — a fixture, shared
