"""Hosts read as a browser reads them, at the cost of the text's length (docs/analysis.md,
"Bounds": the HTML reader's row): long runs of slashes, percent escapes, ignored characters
and numbers give the same hosts as short ones, and a host text no browser takes is no host."""

from __future__ import annotations

import random
from urllib.parse import unquote

import pytest

from risutools.analysis import urlleaks
from risutools.analysis.urlleaks import host_of, page_address_host, url_hosts


@pytest.mark.parametrize("slashes", ["/", "\\", "\\/", "/\t", "\n\\"])
def test_a_long_run_of_slashes_still_names_its_host(slashes: str) -> None:
    run = slashes * 50_000
    assert page_address_host(f"https:{run}h.example/x") == "h.example"
    assert [h for _, h in url_hosts(f"see https:{run}h.example/x")] == ["h.example"]


def test_percent_escapes_decode_as_unquote_does() -> None:
    rng = random.Random(7)
    pieces = ["%41", "%e2", "%80", "%ae", "%C2%AD", "%zz", "%", "%4", "a", "%ED%95%9C", "%ff"]
    for _ in range(5_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert urlleaks._percent_decoded(text) == unquote(text), text
    assert host_of("%41" * 20 + ".example") == "a" * 20 + ".example"


def test_ignored_characters_are_dropped_however_many() -> None:
    # a soft hyphen (UTS #46 ignores it): the host is still h.example
    assert host_of("h" + "\u00ad" * 5_000 + ".example") == "h.example"
    assert host_of("h" + "%C2%AD" * 2_000 + ".example") == "h.example"


@pytest.mark.parametrize("host", [
    "a" * (urlleaks.MAX_HOST_TEXT + 1),                  # ASCII, too long
    "ｅ" * 3_000 + ".example",                           # full-width: no NFKC of it all
    "%41" * 2_000 + ".example",
    "한" * 2_000 + ".example",                            # no punycode of it all
])
def test_a_host_text_no_browser_takes_is_no_host(host: str) -> None:
    assert host_of(host) is None


@pytest.mark.parametrize(("part", "value"), [
    ("0x0xa", None),       # WHATWG: "0xa" after the prefix is no hex number (int() took it)
    ("1_0", None), ("0x1_0", None), ("٣", None), ("0x", 0), ("0X1f", 31), ("017", 15),
    ("09", None), ("0", 0), ("255", 255), ("x", None), ("", None), ("1" * 43, None),
])
def test_ipv4_parts_as_a_browser_reads_them(part: str, value: int | None) -> None:
    assert urlleaks._ipv4_part(part) == value


def test_a_host_whose_last_label_is_a_word_is_no_ipv4_address() -> None:
    assert host_of("0x0xa.1") is None and host_of("a.0x1") is None
    assert host_of("0x7f.1") == "127.0.0.1" and host_of("h.example") == "h.example"
