"""The repository stands on its own: nothing in it points outside it, and every relative link in
its Markdown leads to a file (and, for ``#anchor``, a heading) that exists in it.

The rules live in docs/RULES.md; a pointer to a rule book kept beside the checkout would dangle
for anyone who clones the project, so such pointers fail here.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Spelled in pieces so that this file does not contain what it forbids.
OUTSIDE = tuple(p.encode() for p in ("../" + "shared", "shared" + "/spec"))
SKIPPED_DIRS = {
    ".git",
    ".venv",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    "build",
    "dist",
}

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.MULTILINE)
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # https:, mailto:, ...


def repository_files(root: Path) -> list[Path]:
    """Every file of the checkout: tracked and new (not ignored) ones, or a walk without git."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return sorted(
            p
            for p in root.rglob("*")
            if p.is_file() and not SKIPPED_DIRS & set(p.relative_to(root).parts)
        )
    return sorted(
        root / name for name in out.decode().split("\0") if name and (root / name).is_file()
    )


def outside_pointers(root: Path, files: list[Path]) -> list[str]:
    """``path:line: text`` for every line that points at the rule book outside the project."""
    found = []
    for path in files:
        for number, line in enumerate(path.read_bytes().splitlines(), 1):
            if any(p in line for p in OUTSIDE):
                text = line.decode(errors="replace").strip()
                found.append(f"{path.relative_to(root)}:{number}: {text}")
    return found


def slug(heading: str) -> str:
    """The anchor a Markdown renderer gives a heading: lower case, punctuation out, spaces to -."""
    text = CODE_SPAN.sub(lambda m: m.group(0).strip("`"), heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading keeps its text
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for heading in HEADING.findall(FENCE.sub("", markdown)):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        result.add(base if n == 0 else f"{base}-{n}")
    return result


def links(markdown: str) -> list[str]:
    """The link targets of a Markdown text, outside code blocks and code spans."""
    prose = CODE_SPAN.sub("", FENCE.sub("", markdown))
    return INLINE_LINK.findall(prose) + REFERENCE_LINK.findall(prose)


def broken_links(root: Path, documents: list[Path]) -> list[str]:
    """``document: target (why)`` for every relative link that leads nowhere in the repository."""
    broken = []
    for doc in documents:
        text = doc.read_text(encoding="utf-8")
        for target in links(text):
            if EXTERNAL.match(target):
                continue
            name, _, anchor = target.partition("#")
            where = (doc.parent / name).resolve() if name else doc
            label = f"{doc.relative_to(root)}: {target}"
            if not where.is_relative_to(root):
                broken.append(f"{label} (outside the repository)")
            elif not where.exists():
                broken.append(f"{label} (no such file)")
            elif (
                anchor
                and where.suffix == ".md"
                and anchor not in anchors(where.read_text(encoding="utf-8"))
            ):
                broken.append(f"{label} (no such heading)")
    return broken


def markdown_documents(files: list[Path]) -> list[Path]:
    return [p for p in files if p.suffix == ".md"]


def test_nothing_points_outside_the_repository() -> None:
    files = repository_files(ROOT)
    assert ROOT / "docs" / "RULES.md" in files
    assert outside_pointers(ROOT, files) == []


def test_every_relative_link_resolves() -> None:
    documents = markdown_documents(repository_files(ROOT))
    assert {ROOT / "README.md", ROOT / "docs" / "RULES.md", ROOT / "docs" / "DECISIONS.md"} <= set(
        documents
    )
    assert broken_links(ROOT, documents) == []


def test_readme_and_protos_lead_to_the_rules() -> None:
    assert "](docs/RULES.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    for proto in sorted((ROOT / "proto").rglob("*.proto")):
        assert "docs/RULES.md" in proto.read_text(encoding="utf-8"), proto.name


def test_every_decision_names_the_rules_section_it_completes() -> None:
    decisions = (ROOT / "docs" / "DECISIONS.md").read_text(encoding="utf-8")
    items = re.split(r"^(?=\d+\. )", decisions, flags=re.MULTILINE)[1:]
    assert len(items) >= 20
    for item in items:
        assert "](RULES.md#" in item, item.splitlines()[0]


# The checks themselves must be able to fail.


def test_the_checks_catch_what_they_are_for(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "RULES.md").write_text("# Rules\n\n## 8. Naturals (special hands)\n")
    readme = tmp_path / "README.md"
    readme.write_text(
        "[ok](docs/RULES.md#8-naturals-special-hands) [gone](docs/NOPE.md)\n"
        "[bad anchor](docs/RULES.md#9-surrender) [out](../elsewhere.md) [web](https://x.org)\n"
        "`[in code](docs/NOPE.md)`\n\n```\n[fenced](docs/NOPE.md)\n```\n"
        "[ref]: docs/ALSO_NOPE.md\n"
    )
    bad = tmp_path / "code.py"
    bad.write_text("# see " + "../" + "shared" + "/spec/RULES.md\n")
    files = [readme, tmp_path / "docs" / "RULES.md", bad]
    assert outside_pointers(tmp_path, files) == [
        "code.py:1: # see " + "../" + "shared" + "/spec/RULES.md"
    ]
    assert broken_links(tmp_path, markdown_documents(files)) == [
        "README.md: docs/NOPE.md (no such file)",
        "README.md: docs/RULES.md#9-surrender (no such heading)",
        "README.md: ../elsewhere.md (outside the repository)",
        "README.md: docs/ALSO_NOPE.md (no such file)",
    ]


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        (
            "10. Money, button order, stack caps and rake",
            "10-money-button-order-stack-caps-and-rake",
        ),
        ("16.1 Naturals as data (planned)", "161-naturals-as-data-planned"),
        (
            "The contract: `cpsettle.v1` grows, never breaks",
            "the-contract-cpsettlev1-grows-never-breaks",
        ),
    ],
)
def test_slug(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor
