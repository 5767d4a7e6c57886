"""Every error cpsettle raises on purpose, in one place; each derives from ``CpsettleError``.

The domain's own (``InvalidInput``, ``CardError``) are defined in ``domain.errors``, which must
stay pure, and handed on here. The gRPC status each one becomes is the explicit table in
``api.interceptors`` (``ERROR_CODES``); anything else a call raises is a bug (INTERNAL).
"""

from __future__ import annotations

from .domain.errors import CardError, CpsettleError, InvalidInput, Violation, ViolationCode

__all__ = [
    "AtCapacity",
    "CardError",
    "ConfigError",
    "CpsettleError",
    "DeadlineCapExceeded",
    "InvalidInput",
    "KeyProblem",
    "LogUnavailable",
    "MessageTooLarge",
    "NotFound",
    "NoteError",
    "ProofError",
    "TimeProblem",
    "Unauthenticated",
    "Violation",
    "ViolationCode",
    "WorkerLost",
]


class ConfigError(CpsettleError, ValueError):
    """A setting (``CPSETTLE_*``) that cannot be used; says which and why."""


class NotFound(CpsettleError, LookupError):
    """A named thing (a profile) that does not exist: ``resource_type`` is its message's full
    name (``cpsettle.v1.RuleProfile``), ``name`` what the caller asked for."""

    def __init__(self, message: str, resource_type: str = "", name: str = "") -> None:
        super().__init__(message)
        self.resource_type = resource_type
        self.name = name


class DeadlineCapExceeded(CpsettleError, TimeoutError):
    """A call without a deadline of its own ran past the server's cap."""


class AtCapacity(CpsettleError, RuntimeError):
    """The service already has its maximum of calls in flight; the caller should retry."""


class MessageTooLarge(CpsettleError):
    """A request past the service's message-size limit (RESOURCE_EXHAUSTED)."""


class Unauthenticated(CpsettleError, PermissionError):
    """A call without valid credentials."""


class WorkerLost(CpsettleError, RuntimeError):
    """A worker process ended while it settled a batch, twice in a row."""


class LogUnavailable(CpsettleError, RuntimeError):
    """The audit log cannot take an event now: its sink is blocked (a pipe nobody reads) or
    failing (a closed pipe, a full disk). A settlement must not go out without its event."""


class KeyProblem(CpsettleError, ValueError):
    """A key or key set that cannot be used; says which and why (never the key itself)."""


class TimeProblem(CpsettleError, ValueError):
    """A Timestamp that has no fixed-width millisecond text."""


class ProofError(CpsettleError, ValueError):
    """A Merkle proof that does not verify, or that cannot be made (sizes out of range)."""


class NoteError(CpsettleError, ValueError):
    """A signed note, checkpoint or verifier key that is malformed, or whose signature fails."""
