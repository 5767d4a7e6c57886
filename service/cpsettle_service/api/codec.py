"""Tolerant decoding: request bytes that are not the message become a value, never an exception.

grpc answers INTERNAL when a deserializer raises, so the handlers are given ``tolerant``
deserializers instead: bad bytes arrive as a ``Malformed`` and each handler rejects it as
INVALID_ARGUMENT through ``reject_malformed``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message

from ..domain.errors import InvalidInput, Violation, ViolationCode
from ..errors import MessageTooLarge


class Malformed:
    """What the tolerant deserializer hands over when the bytes are not the request message,
    or are more than the service reads (``too_large``)."""

    __slots__ = ("message", "error", "too_large")

    def __init__(self, message: str, error: Exception, too_large: bool = False) -> None:
        self.message = message
        self.error = error
        self.too_large = too_large

    def invalid(self) -> InvalidInput:
        if isinstance(self.error, InvalidInput):  # read from JSON: every problem named already
            return self.error
        return InvalidInput(
            [
                Violation(
                    "request",
                    f"not a valid {self.message}: {self.error}",
                    ViolationCode.MALFORMED_REQUEST,
                )
            ]
        )


def tolerant(
    message_cls: type[Message], max_bytes: int | None = None, max_valid_bytes: int | None = None
) -> Callable[[bytes], Any]:
    """A deserializer that never raises (grpc would answer INTERNAL): bad bytes -> Malformed.

    ``max_bytes``: the service's own size limit (RESOURCE_EXHAUSTED past it). It is checked
    here, not only by grpc (whose limit is set higher), so that a refused request passes
    through the interceptor and is counted and logged like every other call; before, grpc
    refused it unseen. ``max_valid_bytes``: the most a valid message of this type can be
    (``bounds.MAX_REQUEST_BYTES``); larger bytes are invalid without being parsed.
    """
    from_string = message_cls.FromString
    name = message_cls.DESCRIPTOR.full_name

    def deserialize(data: bytes) -> Any:
        n = len(data)
        if max_bytes is not None and n > max_bytes:
            return Malformed(
                name,
                MessageTooLarge(
                    f"the request is {n} bytes, over this server's limit of {max_bytes}"
                ),
                too_large=True,
            )
        if max_valid_bytes is not None and n > max_valid_bytes:
            return Malformed(
                name,
                ValueError(
                    f"{n} bytes; a valid one is at most {max_valid_bytes} "
                    "(DECISIONS.md decision 23)"
                ),
            )
        try:
            return from_string(data)
        except (DecodeError, ValueError, RuntimeError) as e:
            return Malformed(name, e)

    return deserialize


M = TypeVar("M", bound=Message)


def well_formed(request: M | Malformed) -> M:
    """The request a handler was given, or the ``InvalidInput`` (or ``MessageTooLarge``) of a
    ``Malformed`` one raised."""
    if isinstance(request, Malformed):
        if request.too_large:
            raise request.error
        raise request.invalid()
    return request


def reject_malformed(request: Any) -> None:
    """``well_formed`` for a handler that does not read the request further."""
    well_formed(request)


def reject_unknown(request: Any) -> None:
    """``reject_malformed``, and fields this schema does not know are refused too: for requests
    with no fields of their own (``ListProfilesRequest``), where junk bytes that happen to parse
    would otherwise pass as an empty request."""
    from google.protobuf.unknown_fields import UnknownFieldSet

    reject_malformed(request)
    if len(UnknownFieldSet(request)):
        raise InvalidInput(
            [
                Violation(
                    "request",
                    f"{request.DESCRIPTOR.full_name} has fields this service does not know",
                    ViolationCode.MALFORMED_REQUEST,
                )
            ]
        )
