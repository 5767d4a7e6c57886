"""Names for the codes a settlement carries, in every language: its enum values (read from the
contract's generated descriptors, never a copy of them) and the catalogue's naturals.

Each code's English words are made from its name (``CAP_PAYER_STACK`` of ``enum Cap`` → "Payer
stack"); the catalogs translate them with the code as the message context (``msgctxt
"CAP_PAYER_STACK"``), so the English catalog can say it better ("Payer's stack") and every
language can say it its own way. ``pybabel extract`` finds them through ``extract`` (babel.cfg
maps it to the .proto files and the naturals' catalogue), so a new enum value is a new message
for the translators the next time the catalogs are extracted; ``*_UNSPECIFIED`` values are no
label ("" : nothing to show). Enums: the ones a ``Settlement`` or an ``EvaluateArrangement``
answer holds (docs/RULES.md §4 fouls, §5 rows, §7 pairs and items, §10 caps).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import IO, Any

from google.protobuf.descriptor import Descriptor, EnumDescriptor

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_service.domain.naturals import Natural

from .catalogs import Catalog


def _walk(message: Descriptor, seen: set[str], found: dict[str, EnumDescriptor]) -> None:
    if message.full_name in seen:
        return
    seen.add(message.full_name)
    for field in message.fields:
        if field.enum_type is not None:
            found.setdefault(field.enum_type.full_name, field.enum_type)
        elif field.message_type is not None and not field.message_type.full_name.startswith(
            "google."
        ):
            _walk(field.message_type, seen, found)


@cache
def shown_enums() -> tuple[EnumDescriptor, ...]:
    """Every enum a settlement or an evaluation answer holds, from the descriptors."""
    found: dict[str, EnumDescriptor] = {}
    seen: set[str] = set()
    for message in (pb.Settlement.DESCRIPTOR, pb.EvaluateArrangementResponse.DESCRIPTOR):
        _walk(message, seen, found)
    return tuple(found[name] for name in sorted(found))


def prefix(enum: EnumDescriptor) -> str:
    """The prefix buf's style puts on ``enum``'s values: ``LineItemKind`` → ``LINE_ITEM_KIND_``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper() + "_"


def words(code: str, strip: str = "") -> str:
    """A code as English words: ``PAYER_STACK`` → "Payer stack"."""
    bare = code.removeprefix(strip).replace("_", " ").lower()
    return bare[:1].upper() + bare[1:]


def english_labels() -> dict[str, str]:
    """Every labelled code and its English words (the msgid): enum values, then naturals."""
    out: dict[str, str] = {}
    for enum in shown_enums():
        for value in enum.values:
            if value.number != 0:
                out[value.name] = words(value.name, prefix(enum))
    for natural in Natural:
        out[natural.value] = natural.label
    return out


def labels(catalog: Catalog) -> dict[str, str]:
    """Every code's label in ``catalog``'s language; ``*_UNSPECIFIED``: ""."""
    out = {
        code: catalog.translations.pgettext(code, text) for code, text in english_labels().items()
    }
    for enum in shown_enums():
        out[enum.values_by_number[0].name] = ""
    return out


def label(catalog: Catalog, code: str) -> str:
    """One code's label (a code this client does not know: its words)."""
    known = english_labels().get(code)
    if known is not None:
        return catalog.translations.pgettext(code, known)
    for enum in shown_enums():
        if code == enum.values_by_number[0].name:
            return ""
    return words(code)


def value_name(enum: Any, number: int) -> str:
    """The name of an enum value of a message (a number this client doesn't know: the number)."""
    try:
        name: str = enum.Name(number)
    except ValueError:
        return str(number)
    return name


# --------------------------------------------------------------------------- pybabel extract


def extract(
    fileobj: IO[bytes], keywords: Any, comment_tags: Any, options: dict[str, Any]
) -> Iterator[tuple[int, str, tuple[str, str], list[str]]]:
    """Babel extraction method (babel.cfg): the labels of the enums defined in a .proto file of
    the contract, or of the naturals' catalogue for ``naturals/catalogue.py``; each with the line
    that names it, the code as context."""
    text = fileobj.read().decode("utf-8")
    name = getattr(fileobj, "name", "")

    def line_of(code: str) -> int:
        at = text.find(code)
        return text.count("\n", 0, at) + 1 if at >= 0 else 1

    if name.endswith(".proto"):
        for enum in shown_enums():
            if not name.endswith(enum.file.name.rsplit("/", 1)[-1]):
                continue
            for value in enum.values:
                if value.number != 0:
                    yield (
                        line_of(f"{value.name} ="),
                        "pgettext",
                        (value.name, words(value.name, prefix(enum))),
                        [f"{enum.full_name}.{value.name}"],
                    )
    elif name.replace("\\", "/").endswith("naturals/catalogue.py"):
        for natural in Natural:
            yield (
                line_of(f'Natural.{natural.name}: "'),
                "pgettext",
                (natural.value, natural.label),
                [f"natural {natural.value}"],
            )


__all__ = [
    "english_labels",
    "extract",
    "label",
    "labels",
    "prefix",
    "shown_enums",
    "value_name",
    "words",
]
