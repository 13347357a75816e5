"""The review's HTML page, opened in headless Chromium (as the replay page is).

Skipped with a visible reason when no Chromium is installed, unless
``RISUTOOLS_REQUIRE_BROWSER=1`` (CI), where a missing browser is a failure.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from harness import approve, browser_or_skip, run_browser
from test_catalog_support import CUTTER, MOOD, doc_path, fresh_catalog, load, to_promoted

from risutools.catalog.catalog import Catalog
from risutools.catalog.review import review_catalog
from risutools.report.review_html import render_review_html


def _browser() -> str:
    return browser_or_skip("the review page")


def _dom(browser: str, tmp: Path, url: str) -> str:
    r = run_browser(browser, tmp, "--dump-dom", url)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def _rows(dom: str) -> list[str]:
    body = dom[dom.index('<table id="documents"'):]
    body = body[body.index("<tbody>"):body.index("</tbody>")]
    return re.findall(r"<tr[^>]*>.*?</tr>", body, re.S)


def page_problems(browser: str, tmp: Path, page: Path, documents: int, promoted: int,
                  board: int) -> list[str]:
    """What is wrong with the page as Chromium runs it (empty list: all good)."""
    problems = []
    dom = _dom(browser, tmp, page.as_uri())
    if 'data-ready="1"' not in dom:
        problems.append("the page's script did not run")
    if '<table id="documents"' not in dom:
        return [*problems, "no documents table"]
    rows = _rows(dom)
    if len(rows) != documents:
        problems.append(f"{len(rows)} document rows, expected {documents}")
    if dom.count('data-component="') != board:
        problems.append(f"{dom.count('data-component=')} board rows, expected {board}")
    dom = _dom(browser, tmp, page.as_uri() + "#status=promoted&sort=warnings-desc")
    shown = [r for r in _rows(dom) if "hidden" not in r[:r.index(">")]]
    if len(shown) != promoted:
        problems.append(f"the status filter shows {len(shown)} rows, expected {promoted}")
    dom = _dom(browser, tmp, page.as_uri() + "#sort=warnings-desc")
    warnings = [int(x) for x in re.findall(r'<td data-v="(\d+)">', dom)]
    if warnings != sorted(warnings, reverse=True):
        problems.append("sorting by warnings did not reorder the rows")
    if board:  # the board's own filter: only the rows blocked by the approval gate
        dom = _dom(browser, tmp, page.as_uri() + "#board=approval")
        body = dom[dom.index('<table id="board"'):]
        body = body[:body.index("</table>")]
        rows = re.findall(r"<tr [^>]*data-component=[^>]*>", body)
        shown = [r for r in rows if " hidden" not in r]
        want = sum(1 for r in rows if re.search(r'data-blocked="[^"]*\bapproval\b', r))
        if not want or len(shown) != want:
            problems.append(f"the board filter shows {len(shown)} rows, expected {want}")
    return problems


def _page(tmp_path_factory: pytest.TempPathFactory, tmp: Path) -> tuple[Path, int]:
    cat = fresh_catalog(tmp_path_factory, tmp)
    to_promoted(cat)
    approve(MOOD, "request_review", "kim", "", None, str(cat))  # one row not blocked by it
    hostile = load(doc_path(cat, CUTTER))
    hostile["component_id"] = "module.risu.174678332.x-script"  # promoted, forged: 2 promoted
    hostile["projection"]["title"] = "<script>document.body.innerHTML=''</script>"
    (cat / "hostile.json").write_text(json.dumps(hostile, ensure_ascii=False))
    rv = review_catalog(Catalog.open(cat))
    page = tmp / "review.html"
    page.write_text(render_review_html(rv), encoding="utf-8")
    return page, len(rv.data["board"])


def test_review_page_in_chromium(tmp_path_factory: pytest.TempPathFactory,
                                 tmp_path: Path) -> None:
    browser = _browser()
    page, board = _page(tmp_path_factory, tmp_path)
    assert "<script>document.body" not in page.read_text()  # escaped
    assert page_problems(browser, tmp_path, page, documents=10, promoted=2, board=board) == []


def test_the_page_check_fails_without_the_content(tmp_path_factory: pytest.TempPathFactory,
                                                  tmp_path: Path) -> None:
    browser = _browser()
    page, board = _page(tmp_path_factory, tmp_path)
    text = page.read_text(encoding="utf-8")
    start = text.index("<tbody>", text.index('<table id="documents"'))
    end = text.index("</tbody>", start)
    page.write_text(text[:start + 7] + text[end:], encoding="utf-8")
    problems = page_problems(browser, tmp_path, page, documents=10, promoted=2, board=board)
    assert "0 document rows, expected 10" in problems
    assert any(p.startswith("the status filter shows 0") for p in problems)
    cut = text.rindex("<script>")  # the page's own script (sorting, filters)
    page.write_text(text[:cut] + "</body></html>\n", encoding="utf-8")
    problems = page_problems(browser, tmp_path, page, documents=10, promoted=2, board=board)
    assert "the page's script did not run" in problems
    assert any(p.startswith("the board filter shows") for p in problems)
