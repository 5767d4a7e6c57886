"""The settlement's sentences, drawn per line item kind: the one place a translation of them
will be plugged in.

The sentences (a row's outcome, a line item, a pair, a player, the totals) are the service's,
in English, inside the signed settlement; their bytes never change. A translated sentence will
be rendered from the item's structured fields, once the items carry everything their sentence
says (issue 29, part 2): a renderer registered here for a kind — ``register("LINE_ITEM_KIND_
SCOOP_BONUS", fn)`` — is asked first, and whatever it cannot say (it returns None) is the
signed English sentence, marked as English so a screen reader reads it as such. The pages'
script has the same registry (views/assets/view.js, ``SENTENCES``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .catalogs import Catalog

SIGNED = "en"  # the language of the signed sentences


@dataclass(frozen=True)
class Sentence:
    """A sentence as shown: its text and the language it is in."""

    text: str
    lang: str


Renderer = Callable[[Any, Catalog], "str | None"]
"""Given a settlement's message (a ``LineItem``, ``RowResult``, ``PairResult``…) or its JSON
dict, and the reader's catalog: the sentence in that language, or None."""

_RENDERERS: dict[str, Renderer] = {}


def register(kind: str, renderer: Renderer) -> None:
    """Render the sentences of ``kind`` (a ``LineItemKind`` value's name, or ``ROW``, ``PAIR``,
    ``PLAYER``, ``TOTAL``) with ``renderer`` from now on."""
    _RENDERERS[kind] = renderer


def render(kind: str, item: Any, catalog: Catalog, signed_text: str) -> Sentence:
    """The sentence of ``item`` for a reader of ``catalog``: a registered renderer's, or the
    signed English one."""
    renderer = _RENDERERS.get(kind)
    if renderer is not None and catalog.code != SIGNED:
        text = renderer(item, catalog)
        if text is not None:
            return Sentence(text, catalog.tag)
    return Sentence(signed_text, SIGNED)


__all__ = ["SIGNED", "Renderer", "Sentence", "register", "render"]
