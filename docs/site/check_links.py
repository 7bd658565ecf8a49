"""Checks the internal links of a built HTML site (no network): every relative href/src names a file that exists,
and every #anchor an id (or <a name>) in the page it points to. External links (http:, https:, mailto:, ...) are skipped.

    python docs/site/check_links.py target/docs/html     # exit status 1 and a line per broken link
    python docs/site/check_links.py --self-test          # proves that a broken link and a broken anchor are caught
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

LINK_ATTRS = {"href", "src"}
SKIPPED_SCHEMES = {"http", "https", "mailto", "data", "javascript", "ftp", "tel"}


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[int, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.add(value)
            elif name in LINK_ATTRS and tag != "base":
                self.links.append((self.getpos()[0], value))
            elif name == "srcset":
                for part in value.split(","):
                    if part.strip():
                        self.links.append((self.getpos()[0], part.split()[0]))


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    page.close()
    return page


def check_site(root: Path) -> list[str]:
    """Every broken internal link of the HTML files under root, as 'file:line: message'."""
    root = root.resolve()
    pages = {p.resolve(): _parse(p) for p in sorted(root.rglob("*.html"))}
    problems: list[str] = []
    for path, page in pages.items():
        for line, link in page.links:
            parts = urlsplit(link)
            if parts.scheme.lower() in SKIPPED_SCHEMES or parts.netloc or link.startswith("//"):
                continue
            if parts.scheme:  # another scheme (file:, ...) is not a link a published site can follow
                problems.append(f"{path.relative_to(root)}:{line}: '{link}': a link with scheme '{parts.scheme}:'")
                continue
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            where = f"{path.relative_to(root)}:{line}: '{link}'"
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                problems.append(f"{where}: no file {target}")
                continue
            anchor = unquote(parts.fragment)
            if not anchor or target.suffix != ".html":
                continue
            ids = pages[target].ids if target in pages else _parse(target).ids
            if anchor not in ids:
                problems.append(f"{where}: no anchor '#{anchor}' in {target.relative_to(root) if target.is_relative_to(root) else target}")
    return problems


def self_test() -> int:
    """A small site with one good link, one link to a missing file and one to a missing anchor: exactly the two bad
    ones must be reported, and the site without them must pass."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "sub").mkdir()
        (d / "style.css").write_text("")
        (d / "sub" / "index.html").write_text("<p>a directory's page</p>")
        (d / "sub" / "page.html").write_text('<h1 id="top">t</h1><a name="old">o</a><a href="../index.html#intro">up</a>')
        good = (
            '<link href="style.css" rel="stylesheet"><h2 id="intro">i</h2>'
            '<a href="sub/page.html#top">a</a><a href="sub/page.html#old">b</a><a href="#intro">c</a>'
            '<a href="https://example.org/missing.html#x">external</a><a href="sub/">dir</a><a href="#">top</a>'
        )
        (d / "index.html").write_text(good)
        if check_site(d):
            print("self-test FAILED: a good site reported", check_site(d))
            return 1
        (d / "index.html").write_text(good + '\n<a href="sub/nope.html">x</a>\n<img src="sub/page.html#gone">\n<a href="#nowhere">y</a>')
        found = check_site(d)
        want = [
            "index.html:2: 'sub/nope.html': no file",
            "index.html:3: 'sub/page.html#gone': no anchor '#gone'",
            "index.html:4: '#nowhere': no anchor '#nowhere'",
        ]
        if len(found) != len(want) or not all(f.startswith(w) for f, w in zip(found, want)):
            print("self-test FAILED: expected", want, "got", found)
            return 1
    print("check_links self-test: a missing file, a missing anchor in another page and in the same page are caught")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("site", nargs="?", type=Path, help="the built HTML directory (target/docs/html)")
    ap.add_argument("--self-test", action="store_true", help="check that the checker catches broken links and anchors")
    args = ap.parse_args(argv)
    if args.self_test:
        return self_test()
    if args.site is None or not args.site.is_dir():
        ap.error("give the built site's directory")
    problems = check_site(args.site)
    n_pages = len(list(args.site.rglob("*.html")))
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} broken internal link(s) in {n_pages} pages of {args.site}")
        return 1
    print(f"internal links of {n_pages} pages of {args.site}: all good")
    return 0


if __name__ == "__main__":
    sys.exit(main())
