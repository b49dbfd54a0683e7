"""Embedded fonts of an EPUB: which families its CSS declares (``@font-face``), which classes
use them, and the font files' bytes, de-obfuscated per the OCF rules.

Only the simplest CSS is read (a class selector, optionally after a tag name, naming a
family a ``@font-face`` rule declares): enough for a book's display face, never a CSS engine.
A font file must be in the manifest. Obfuscation (``META-INF/encryption.xml``):

- IDPF (``http://www.idpf.org/2008/embedding``): the first 1040 bytes XOR the SHA-1 of the
  package's unique identifier with its white space removed.
- Adobe (``http://ns.adobe.com/pdf/enc#RC``): the first 1024 bytes XOR the 16 bytes of the
  identifier's UUID.

A font obfuscated with another book's identifier de-obfuscates to garbage, which no font
engine loads: the text then shows in the reader's own font, as the OCF rules want.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from core.books.epubpackage import _resolve
from core.books.epubzip import EpubArchive, _find_opf, _local, _xml
from core.books.limits import DEFAULT_LIMITS, Limits

IDPF = "http://www.idpf.org/2008/embedding"
ADOBE = "http://ns.adobe.com/pdf/enc#RC"
FONT_SUFFIXES = (".ttf", ".otf", ".woff", ".woff2")
MAX_FONT_BYTES = 8 * 1024 * 1024
_FACE = re.compile(r"@font-face\s*\{([^}]*)\}", re.I)
_RULE = re.compile(r"([^{}@]+)\{([^}]*)\}")
_FAMILY = re.compile(r"font-family\s*:\s*([^;]+)", re.I)
_URL = re.compile(r"url\(\s*['\"]?([^'\")]+)['\"]?\s*\)", re.I)
_CLASS = re.compile(r"^(?:[a-z][a-z0-9]*)?\.([\w-]+)$", re.I)


@dataclass(frozen=True)
class FontFace:
    family: str
    path: str  # in the archive


def _first_family(value: str) -> str:
    return value.split(",")[0].strip().strip("'\"").strip()


def font_faces(css: str, css_dir: str, listed: set[str]) -> list[FontFace]:
    """The ``@font-face`` rules of a style sheet whose file the manifest lists."""
    faces: list[FontFace] = []
    for body in _FACE.findall(css):
        family = _FAMILY.search(body)
        if family is None:
            continue
        for src in _URL.findall(body):
            path = _resolve(css_dir, src)
            if path and path in listed and path.lower().endswith(FONT_SUFFIXES):
                faces.append(FontFace(_first_family(family.group(1)), path))
                break
    return faces


def font_classes(css: str, families: set[str]) -> dict[str, str]:
    """class → embedded family, from rules like ``.x { font-family: 'Face' }``."""
    classes: dict[str, str] = {}
    for selectors, body in _RULE.findall(_FACE.sub("", css)):
        family = _FAMILY.search(body)
        if family is None or _first_family(family.group(1)) not in families:
            continue
        for selector in selectors.split(","):
            match = _CLASS.match(selector.strip())
            if match:
                classes[match.group(1)] = _first_family(family.group(1))
    return classes


def obfuscation(arc: EpubArchive) -> dict[str, str]:
    """Font path → obfuscation algorithm, from ``META-INF/encryption.xml``."""
    if not arc.has("META-INF/encryption.xml"):
        return {}
    root = _xml(arc.read("META-INF/encryption.xml"), arc.path, "encryption.xml")
    found: dict[str, str] = {}
    for data in root.iter():
        if _local(data.tag) != "EncryptedData":
            continue
        method = uri = ""
        for el in data.iter():
            if _local(el.tag) == "EncryptionMethod":
                method = el.get("Algorithm", "")
            elif _local(el.tag) == "CipherReference":
                uri = unquote(el.get("URI", "")).lstrip("/")
        if method in (IDPF, ADOBE) and uri:
            found[posixpath.normpath(uri)] = method
    return found


def unique_identifier(arc: EpubArchive) -> str:
    opf = _xml(arc.read(_find_opf(arc)), arc.path, "package file")
    wanted = opf.get("unique-identifier", "")
    first = ""
    for el in opf.iter():
        if _local(el.tag) == "identifier":
            text = "".join(el.itertext())
            first = first or text
            if el.get("id") == wanted:
                return text
    return first


def deobfuscate(data: bytes, method: str, identifier: str) -> bytes:
    if method == IDPF:
        key = hashlib.sha1("".join(c for c in identifier if c not in " \t\r\n").encode()).digest()
        size = 1040
    elif method == ADOBE:
        hexdigits = re.sub(r"[^0-9a-fA-F]", "", identifier.removeprefix("urn:uuid:"))
        if len(hexdigits) < 32:
            return data
        key = bytes.fromhex(hexdigits[:32])
        size = 1024
    else:
        return data
    head = bytes(b ^ key[i % len(key)] for i, b in enumerate(data[:size]))
    return head + data[size:]


def read_fonts(
    epub_path: Path, faces: list[tuple[str, str]], *, limits: Limits = DEFAULT_LIMITS
) -> list[tuple[str, bytes]]:
    """(family, font bytes ready for a font engine) of each (family, path) given."""
    arc = EpubArchive(epub_path, limits)
    try:
        hidden = obfuscation(arc)
        identifier = unique_identifier(arc) if hidden else ""
        out = []
        for family, path in faces:
            if not arc.has(path) or arc.entries[path].file_size > MAX_FONT_BYTES:
                continue
            data = arc.read(path)
            if path in hidden:
                data = deobfuscate(data, hidden[path], identifier)
            out.append((family, data))
        return out
    finally:
        arc.close()


def encode_faces(faces: list[FontFace]) -> str:
    """How a book's fonts travel with it (``ParsedBook.extra["fonts"]``)."""
    return "\n".join(f"{face.family}\t{face.path}" for face in faces)


def decode_faces(value: str) -> list[tuple[str, str]]:
    return [
        (family, path)
        for line in value.splitlines()
        if "\t" in line
        for family, path in [line.split("\t", 1)]
    ]


_STYLE = re.compile(rb"<style[^>]*>(.*?)</style>", re.S | re.I)


@dataclass
class BookStyles:
    """The embedded faces a book declares and the classes that use them."""

    faces: list[FontFace]
    classes: dict[str, str]

    def add(self, css: str, css_dir: str, listed: set[str]) -> None:
        for face in font_faces(css, css_dir, listed):
            if face not in self.faces:
                self.faces.append(face)
        if self.faces:
            self.classes.update(font_classes(css, {f.family for f in self.faces}))

    def add_document(self, data: bytes, doc: str, listed: set[str]) -> None:
        """A document's own ``<style>`` elements (only looked for when it names a face)."""
        if b"@font-face" not in data and (not self.faces or b"font-family" not in data):
            return
        for css in _STYLE.findall(data):
            self.add(css.decode("utf-8", errors="replace"), posixpath.dirname(doc), listed)


def stylesheet_fonts(
    arc: EpubArchive, manifest: dict[str, tuple[str, str]], listed: set[str]
) -> BookStyles:
    """The faces and classes of the style sheets the manifest lists (``path, media type``),
    when it lists any font file at all."""
    styles = BookStyles([], {})
    if not any(
        path.lower().endswith(FONT_SUFFIXES)
        or mt.startswith(
            ("font/", "application/font", "application/x-font", "application/vnd.ms-opentype")
        )
        for path, mt in manifest.values()
    ):
        return styles
    for path, media_type in manifest.values():
        if media_type == "text/css" and arc.has(path) and arc.entries[path].file_size < 2_000_000:
            styles.add(
                arc.read(path).decode("utf-8", errors="replace"), posixpath.dirname(path), listed
            )
    return styles


def book_font_faces(epub_path: Path, *, limits: Limits = DEFAULT_LIMITS) -> list[tuple[str, str]]:
    """(family, path) of the faces a book declares, from its style sheets and, when they
    declare none, from the first documents' own ``<style>`` elements."""
    from core.books.epubpackage import read_package

    arc = EpubArchive(epub_path, limits)
    try:
        if not any(name.lower().endswith(FONT_SUFFIXES) for name in arc.entries):
            return []  # most books: no font file at all (no package to read)
        opf_path = _find_opf(arc)
        pkg = read_package(_xml(arc.read(opf_path), arc.path, "package file"), opf_path, arc)
        manifest = {k: (i.path, i.media_type) for k, i in pkg.manifest.items()}
        if not any(p.lower().endswith(FONT_SUFFIXES) for p, _ in manifest.values()):
            return []
        styles = stylesheet_fonts(arc, manifest, pkg.listed)
        if not styles.faces:
            for doc in [d.path for d in pkg.spine if d.kind == "html"][:50]:
                styles.add_document(arc.read(doc), doc, pkg.listed)
        return [(face.family, face.path) for face in styles.faces]
    finally:
        arc.close()
