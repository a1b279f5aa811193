"""The documentation a newcomer reads: a short README whose links all resolve inside the
repository, and one page per study under docs/."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from costlab import STUDIES  # the registry's studies: a new one needs its page, and no edit here

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 200

# [text](target) in markdown, not images' alt text nor code spans.
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def markdown_files() -> list[Path]:
    """The user pages, the changelog and the lab notebook (benchmarks/), which the user pages link to."""
    files = [ROOT / "README.md", ROOT / "config" / "README.md", ROOT / "CHANGELOG.md"]
    files += sorted((ROOT / "docs").glob("*.md"))
    files += sorted((ROOT / "benchmarks").glob("*.md"))
    return files


def _without_code(text: str) -> str:
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def _slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    anchors = set()
    for heading in re.findall(r"^#+\s+(.*)$", re.sub(r"```.*?```", "", markdown, flags=re.S),
                              flags=re.M):
        anchors.add(_slug(heading))
    return anchors


def test_readme_is_short_with_a_table_of_contents():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= README_MAX_LINES
    sections = re.findall(r"^## (.*)$", readme, flags=re.M)
    toc = {target.lstrip("#") for target in LINK.findall(readme.split("\n## ", 1)[0])}
    assert toc, "README has no table of contents before its first section"
    missing = [s for s in sections if _slug(s) not in toc]
    assert not missing, f"README's table of contents lacks {missing}"
    for command in ("make all", "make test"):
        assert command in readme


def test_readme_links_every_study_page():
    readme = (ROOT / "README.md").read_text()
    for study in STUDIES:
        assert f"(docs/{study}.md)" in readme
        assert (ROOT / "docs" / f"{study}.md").is_file()


@pytest.mark.parametrize("md", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves_inside_the_repository(md: Path):
    text = md.read_text()
    broken = []
    for target in LINK.findall(_without_code(text)):
        if re.match(r"[a-z]+:", target):
            continue  # an absolute URL (http:, mailto:)
        path_part, _, anchor = target.partition("#")
        resolved = (md.parent / path_part).resolve() if path_part else md
        if ROOT not in resolved.parents and resolved != ROOT:
            broken.append(f"{target} (outside the repository)")
        elif not resolved.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved.read_text()):
            broken.append(f"{target} (no such heading)")
    assert not broken, f"{md.relative_to(ROOT)}: broken links {broken}"


@pytest.mark.parametrize("md", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_reference_to_files_outside_the_repository(md: Path):
    # Paths written in code spans count too: a reader cannot open ../shared/... from a clone.
    outside = re.findall(r"\.\./shared/\S*|/work/\S*", md.read_text())
    assert not outside, f"{md.relative_to(ROOT)} names files outside the repository: {outside}"


def test_no_documented_command_passes_the_workflow_profile_again():
    """profiles/default is Snakemake's workflow-specific profile, loaded on every run from the checkout: a
    command with --profile profiles/default loads it twice and prints "Using profiles profiles/default and
    workflow specific profile profiles/default" (the docs used to show that form)."""
    for path in markdown_files():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            assert not re.search(r"--profile[ =]\S*profiles/default\b", line), (
                f"{path.relative_to(ROOT)}:{number}: {line}"
            )


def test_user_pages_carry_no_dated_measurement():
    """docs/*.md say what is true now; a measurement taken on a day (with the machine's load that day)
    belongs in benchmarks/ with its command, or in CHANGELOG.md. The articles' own dates (2010-2024 data,
    publication months) are not ISO dates of a run. Each pattern was found on a user page before it moved
    to benchmarks/ (the week bucket's and the month variant's measured rows, a pair of log byte counts,
    the sample events' storage table)."""
    # a run's date or machine state, its wall or CPU time, its measured costs per event, write or query
    dated = re.compile(r"\b202[5-9]-\d\d-\d\d\b|load average|\d s wall\b|\buser CPU\b|on this 2-core machine|"
                       r"\d B/(event|write|query)\b|identical runs read \d|B / event \(engine lab\)",
                       re.IGNORECASE)
    found = [f"{page.name}:{number}: {line.strip()}"
             for page in sorted((ROOT / "docs").glob("*.md"))
             for number, line in enumerate(page.read_text().splitlines(), 1) if dated.search(line)]
    assert not found, found
