"""A request the real server refuses, as the tests read it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest

from cpsettle_client.client import SettlementError


def refused(call: Callable[[Any], Any], request: Any) -> tuple[list[tuple[str, str]], str]:
    """``call(request)`` answered INVALID_ARGUMENT: every (field, reason) it named, in order, and
    the violation codes of its metadata."""
    with pytest.raises(SettlementError) as e:
        call(request)
    assert e.value.code is grpc.StatusCode.INVALID_ARGUMENT
    return [(v.field, v.reason) for v in e.value.violations], e.value.metadata["violationCodes"]
