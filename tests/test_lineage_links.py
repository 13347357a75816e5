"""A lineage's links: reposts of the same bytes, reposts of the same facts, newer versions;
the facts spelled (``facts_content``) only for a member that is not a repost of the same
bytes (a catalog of thousands of copies of one module spelled each copy's facts: a sixth of
a review's CPU on copies of the real corpus's modules)."""

from __future__ import annotations

from typing import Any

import pytest

from risutools.catalog import lineage as lineage_module
from risutools.catalog.interactions import Index, Summary
from risutools.catalog.lineage import lineages

#: the facts every member shares but those naming the copy
_SHARED = {"facts": "component-facts-v1", "module_id": "mod-1", "hosts": ["a.example"],
           "lorebook_entries": ["x", "y"]}


def _member(n: int, sha: str, post: int, version: str = "1.0.0", **more: Any) -> Summary:
    facts = {**_SHARED, "component_id": f"m.{n}", "source_sha256": sha,
             "source_part": "module.risum", "title": f"copy {n}", **more}
    return Summary(f"m.{n}", f"m{n}.json", "", "candidate", "inactive", (), (), facts, "",
                   version, f"risu:{post}")


def _group() -> list[Summary]:
    """One module: m.0 first (post 10); m.1 and m.3 its bytes again; m.2 other bytes with
    the same facts; m.4 a newer version with another host; m.5 m.4's bytes again."""
    return [
        _member(0, "A", 10),
        _member(1, "A", 11),
        _member(2, "B", 12),
        _member(3, "A", 13),
        _member(4, "C", 14, "1.1.0", hosts=["b.example"]),
        _member(5, "C", 15, "1.1.0", hosts=["b.example"]),
    ]


def test_the_links_of_a_group_of_reposts_and_versions() -> None:
    groups, links = lineages(Index(_group()))
    [group] = list(groups)
    assert [m["component_id"] for m in group["members"]] == [f"m.{i}" for i in range(6)]
    assert group["reposts"] == [
        {"component_id": "m.1", "same_as": "m.0", "same": "bytes"},
        {"component_id": "m.2", "same_as": "m.0", "same": "facts"},
        {"component_id": "m.3", "same_as": "m.0", "same": "bytes"},
        {"component_id": "m.5", "same_as": "m.4", "same": "bytes"},
    ]
    assert [(s["newer"], s["older"]) for s in group["supersedes"]] == [("m.4", "m.0")]
    assert group["supersedes"][0]["drift"] == {
        "hosts": {"added": ["b.example"], "removed": ["a.example"]}}
    assert len(links) == 5


def test_the_facts_are_spelled_only_past_the_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    spelled: list[str] = []
    real = lineage_module.facts_content

    def counted(s: Summary) -> str:
        spelled.append(s.component_id)
        return real(s)

    monkeypatch.setattr(lineage_module, "facts_content", counted)
    groups, _links = lineages(Index(_group()))
    list(groups)
    # m.1, m.3 and m.5 are their bytes again: found so before their facts are asked
    assert spelled == ["m.0", "m.2", "m.4"]
