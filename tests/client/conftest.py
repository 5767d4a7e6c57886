"""The CLI's table output follows the locale (``LANG``…); the tests here read English unless
they ask for a language, whatever the machine they run on is set to."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def english_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CPSETTLE_LANG", "en")
