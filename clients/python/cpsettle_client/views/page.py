"""One self-contained HTML file: the template filled with the stylesheet, the scripts and the
embedded JSON (settlements, the key set), with nothing to fetch."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from string import Template
from typing import Any

# assets/proof.mjs is a symbolic link to clients/js/proof.mjs, the Node checker's own file (the
# wheel holds its content): one copy of the digest rule, tested by the vectors in both places.
ASSETS = resources.files(__package__) / "assets"

_EXPORT = re.compile(r"^export (?=const |class |function |async function )", re.MULTILINE)


def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


@cache
def proof_script() -> str:
    """clients/js/proof.mjs with its ``export`` keywords taken off, to inline in a page."""
    return _EXPORT.sub("", _asset("proof.mjs"))


@cache
def _parts() -> tuple[Template, str, str]:
    script = proof_script() + "\n" + _asset("view.js")
    if "</script" in script.lower():  # would end the inline script early
        raise RuntimeError("a view script contains '</script'")
    return Template(_asset("page.html")), _asset("view.css"), script


def script_json(value: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: every ``<`` escaped as ``\\u003c``
    (the same value for JSON.parse, and no ``</script>`` can end the element early)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


@dataclass
class Page:
    """A page under construction: its title, body (HTML text), and JSON data by element id."""

    title: str
    body: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    footer: str = ""

    def embed(self, element_id: str, value: Any) -> str:
        """Embed ``value`` as JSON under ``element_id``; returns the id."""
        self.data[element_id] = value
        return element_id

    def render(self) -> str:
        from importlib.metadata import PackageNotFoundError, version

        try:
            generator = f"cpsettle {version('cpsettle')}"
        except PackageNotFoundError:
            generator = "cpsettle"
        template, css, script = _parts()
        data = "\n".join(
            f'<script type="application/json" id="{html.escape(k)}">{script_json(v)}</script>'
            for k, v in self.data.items())
        return template.substitute(
            generator=generator, title=html.escape(self.title), heading=html.escape(self.title),
            css=css, body=self.body, data=data, script=script,
            footer=html.escape(self.footer or f"Made by {generator}. A view of the data "
                               "embedded below; it decides nothing and sends nothing."),
        )


__all__ = ["Page", "proof_script", "script_json"]
