"""Build small EPUBs in tests, including broken and hostile ones."""

from __future__ import annotations

import zipfile
from pathlib import Path

CONTAINER = """<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>"""


def chapter(title: str, body: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
        f"<head><title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>"
    )


def make_epub(
    path: Path,
    chapters: list[tuple[str, str]],
    *,
    title: str = "Test Book",
    author: str = "A. Writer",
    nav: bool = True,
    ncx: bool = False,
    extra_files: dict[str, bytes | str] | None = None,
    spine_attrs: dict[int, str] | None = None,
    extra_manifest: str = "",
    extra_spine_first: str = "",
    mimetype: bool = True,
    opf_override: str | None = None,
) -> Path:
    items = []
    refs = []
    for i, _ in enumerate(chapters):
        items.append(f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>')
        refs.append(f'<itemref idref="c{i}" {(spine_attrs or {}).get(i, "")}/>')
    if nav:
        items.append(
            '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
        )
    if ncx:
        items.append('<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>')
    opf = opf_override or (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f"<dc:title>{title}</dc:title><dc:creator>{author}</dc:creator><dc:language>en</dc:language>"
        '<dc:identifier id="id">x</dc:identifier></metadata>'
        f"<manifest>{''.join(items)}{extra_manifest}</manifest>"
        f"<spine{' toc="ncx"' if ncx else ''}>{extra_spine_first}{''.join(refs)}</spine></package>"
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        if mimetype:
            z.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", CONTAINER)
        z.writestr("OEBPS/content.opf", opf)
        for i, (t, body) in enumerate(chapters):
            z.writestr(f"OEBPS/c{i}.xhtml", chapter(t, body))
        if nav:
            links = "".join(
                f'<li><a href="c{i}.xhtml">Nav {t}</a></li>' for i, (t, _) in enumerate(chapters)
            )
            z.writestr(
                "OEBPS/nav.xhtml",
                '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body>'
                f'<nav epub:type="toc"><ol>{links}</ol></nav></body></html>',
            )
        if ncx:
            points = "".join(
                f'<navPoint id="n{i}"><navLabel><text>NCX {t}</text></navLabel><content src="c{i}.xhtml"/></navPoint>'
                for i, (t, _) in enumerate(chapters)
            )
            z.writestr(
                "OEBPS/toc.ncx",
                f'<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/"><navMap>{points}</navMap></ncx>',
            )
        for name, data in (extra_files or {}).items():
            z.writestr(name, data)
    return path


def paragraphs(n: int, words: int = 60, seed: str = "word") -> str:
    return "".join(
        "<p>" + " ".join(f"{seed}{i}x{j}" for j in range(words)) + ".</p>" for i in range(n)
    )


def _nested_nav(toc: list[tuple[str, int, str]]) -> str:
    out: list[str] = ["<ol>"]
    depth = 1
    for n, (title, level, href) in enumerate(toc):
        while depth < level:
            out.append("<ol>")
            depth += 1
        while depth > level:
            out.append("</li></ol>")
            depth -= 1
        if n and out[-1] != "<ol>":
            out.append("</li>")
        out.append(f'<li><a href="{href}">{title}</a>')
    out.append("</li>")
    while depth > 1:
        out.append("</ol></li>")
        depth -= 1
    out.append("</ol>")
    return "".join(out)


def _nested_ncx(toc: list[tuple[str, int, str]]) -> str:
    out: list[str] = []
    depth = 0
    for n, (title, level, href) in enumerate(toc):
        while depth >= level:
            out.append("</navPoint>")
            depth -= 1
        out.append(
            f'<navPoint id="p{n}" playOrder="{n + 1}"><navLabel><text>{title}</text></navLabel>'
            f'<content src="{href}"/>'
        )
        depth += 1
    out.extend("</navPoint>" for _ in range(depth))
    return "".join(out)


def make_anchored_epub(
    path: Path,
    docs: list[tuple[str, str]],
    toc: list[tuple[str, int, str]],
    *,
    title: str = "Anchored Book",
    use_ncx: bool = False,
) -> Path:
    """An EPUB whose spine files are ``docs`` (name, body XHTML) and whose contents are
    ``toc`` entries (title, level, href such as ``book.xhtml#ch2``), nested by level, in a
    nav document or (``use_ncx``) an NCX."""
    items = [
        f'<item id="d{i}" href="{name}" media-type="application/xhtml+xml"/>'
        for i, (name, _) in enumerate(docs)
    ]
    refs = [f'<itemref idref="d{i}"/>' for i in range(len(docs))]
    if use_ncx:
        items.append('<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>')
    else:
        items.append(
            '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
        )
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f"<dc:title>{title}</dc:title><dc:creator>A. Writer</dc:creator><dc:language>en</dc:language>"
        '<dc:identifier id="id">x</dc:identifier></metadata>'
        f"<manifest>{''.join(items)}</manifest>"
        f"<spine{' toc="ncx"' if use_ncx else ''}>{''.join(refs)}</spine></package>"
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", CONTAINER)
        z.writestr("OEBPS/content.opf", opf)
        for name, body in docs:
            z.writestr(
                f"OEBPS/{name}",
                '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
                f"<head><title>{title}</title></head><body>{body}</body></html>",
            )
        if use_ncx:
            z.writestr(
                "OEBPS/toc.ncx",
                '<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/">'
                f"<navMap>{_nested_ncx(toc)}</navMap></ncx>",
            )
        else:
            z.writestr(
                "OEBPS/nav.xhtml",
                '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body>'
                f'<nav epub:type="toc">{_nested_nav(toc)}</nav></body></html>',
            )
    return path


GUTENBERG_BOILERPLATE = (
    "The Project Gutenberg eBook of {title} This ebook is for the use of anyone anywhere in "
    "the United States and most other parts of the world at no cost and with almost no "
    "restrictions whatsoever. You may copy it, give it away or re-use it under the terms of "
    "the Project Gutenberg License included with this ebook or online at www.gutenberg.org."
)


def gutenberg_like_epub(path: Path, *, use_ncx: bool = True, paragraphs_per_part: int = 12) -> Path:
    """A book shaped like a Project Gutenberg EPUB: a boilerplate first contents entry
    pointing at a paragraph, one file holding several ``<h2 id=...>`` stories, each with
    nested ``I.``/``II.``/``III.`` parts (``<h3>``, some reached through ``<a id>`` or
    ``<a name>`` anchors), and a second file with two more chapters."""
    title = "The Adventures of Testing Holmes"
    boiler = GUTENBERG_BOILERPLATE.format(title=title)
    body = [f'<p id="pg-header">{boiler}</p>', f'<h1 id="title">{title}</h1>']
    toc: list[tuple[str, int, str]] = [
        (boiler, 1, "book.xhtml#pg-header"),
        (title, 1, "book.xhtml#title"),
    ]
    stories = ["A Scandal in Bohemia", "The Red-Headed League", "A Case of Identity"]
    for s, story in enumerate(stories, 1):
        roman = ["I", "II", "III"][s - 1]
        body.append(f'<h2 id="story{s}">{roman}. {story.upper()}</h2>')
        toc.append((f"{roman}. {story}", 1, f"book.xhtml#story{s}"))
        for p, part in enumerate(["I.", "II.", "III."], 1):
            ident = f"s{s}p{p}"
            if p == 1:
                body.append(f'<h3 id="{ident}">{part}</h3>')
            elif p == 2:
                body.append(f'<div><a id="{ident}"></a></div><h3>{part}</h3>')
            else:
                body.append(f'<h3><a name="{ident}"></a>{part}</h3>')
            toc.append((part, 2, f"book.xhtml#{ident}"))
            body.append(paragraphs(paragraphs_per_part, seed=f"s{s}p{p}w"))
    more = []
    for c in (1, 2):
        more.append(f'<div class="chapter" id="more{c}"><h2>MORE {c}</h2>')
        more.append(paragraphs(paragraphs_per_part, seed=f"more{c}w") + "</div>")
        toc.append((f"  More\n   {c} ", 1, f"more.xhtml#more{c}"))
    return make_anchored_epub(
        path,
        [("book.xhtml", "".join(body)), ("more.xhtml", "".join(more))],
        toc,
        title=title,
        use_ncx=use_ncx,
    )


def damage_member(path: Path, name: str) -> None:
    """Flip a byte of member ``name``'s compressed data in the EPUB at ``path``: a bad CRC
    or a broken stream when it is read."""
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(name)
    at = info.header_offset + 30 + len(info.filename) + len(info.extra) + 5
    raw[at] ^= 0xFF
    path.write_bytes(bytes(raw))
