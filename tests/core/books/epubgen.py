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
