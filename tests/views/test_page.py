"""How a page is assembled (no browser needed): one file, nothing to fetch, the embedded JSON
unable to end its element, and the shared checker inlined whole."""

from __future__ import annotations

import json
import re

from cpsettle_client.views import page as views_page
from cpsettle_client.views.hand import hand_page
from tests.conftest import ROOT


def test_embedded_json_cannot_end_its_script_element() -> None:
    value = {"text": ["</script><script>alert(1)</script>", "a<b"]}
    text = views_page.script_json(value)
    assert "<" not in text
    assert json.loads(text) == value


def test_the_page_inlines_the_shared_checker_and_fetches_nothing() -> None:
    stored = {"settlement": {"context": {"handId": "h<1>"}, "players": []}}
    html = hand_page(stored, keys={"keys": []})
    proof = (ROOT / "clients" / "js" / "proof.mjs").read_text(encoding="utf-8")
    inlined = views_page.proof_script()
    assert "export " not in re.sub(r"//.*", "", inlined)
    assert inlined.replace(" ", "") == proof.replace("export ", "").replace(" ", "")
    assert inlined in html
    assert "h&lt;1&gt;" in html and "h<1>" not in html  # the title is escaped
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "default-src 'none'" in html
    assert html.count("<script") == 4  # the settlement, the key set, the languages, the code
