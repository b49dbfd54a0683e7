"""The EPUB container: a zip opened with safety checks, its XML files, its package path.

The archive is untrusted. Sizes and compression ratios are checked from the zip directory
before anything is decompressed and enforced again while reading; names with ``..`` or an
absolute path are never read; XML with entity declarations is refused (billion laughs).
"""

from __future__ import annotations

import os
import posixpath
import re
import struct
import threading
import zipfile
import zlib
from pathlib import Path
from types import ModuleType
from urllib.parse import unquote
from xml.etree import ElementTree as ET

from core.books.limits import DEFAULT_LIMITS, Limits, human_size, too_large
from core.errors import BookCode, BookError

NS = {
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
    "ncx": "http://www.daisy.org/z3986/2005/ncx/",
    "xhtml": "http://www.w3.org/1999/xhtml",
    "epub": "http://www.idpf.org/2007/ops",
    "enc": "urn:oasis:names:tc:opendocument:xmlns:container",
}
FONT_OBFUSCATION = (
    "http://www.idpf.org/2008/embedding",
    "http://ns.adobe.com/pdf/enc#RC",
)
_ENTITY = re.compile(rb"<!ENTITY", re.I)


class EpubArchive:
    """A zip opened with the safety checks; ``read(name)`` returns the bytes of one entry."""

    def __init__(self, path: Path, limits: Limits = DEFAULT_LIMITS) -> None:
        self.path = path
        self.limits = limits
        self._lock = threading.Lock()  # (a reading-ahead thread reads too: core.books.epubahead)
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, ValueError, EOFError, NotImplementedError, struct.error):
            raise BookError(
                BookCode.CORRUPT,
                f"{path.name} is damaged: it is not a valid EPUB (zip) file.",
                hint="Download the book again, or export it again from the program that made it.",
            ) from None
        except OSError as exc:
            raise BookError(
                BookCode.UNREADABLE, f"{path.name} could not be read ({exc.strerror or exc})."
            ) from None
        _check_container(path, self.zip)
        infos = self.zip.infolist()
        if len(infos) > limits.max_entry_count:
            raise too_large(path, f"it holds more than {limits.max_entry_count:,} files")
        total = 0
        self.entries: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            name = _utf8_name(info)
            if (
                name.startswith(("/", "\\"))
                or ".." in name.split("/")
                or re.match(r"^[A-Za-z]:", name)
            ):
                continue  # never read outside the archive; such entries are simply ignored
            total += info.file_size
            if (
                info.compress_size
                and info.file_size / max(info.compress_size, 1) > limits.max_compression_ratio
                and info.file_size > 1024 * 1024
            ):
                raise too_large(
                    path,
                    f"one of its files expands {info.file_size // max(info.compress_size, 1)} times when unpacked (a zip bomb?)",
                )
            self.entries[name] = info
        if total > limits.max_uncompressed_bytes:
            raise too_large(
                path,
                f"it unpacks to {human_size(total)}, more than {human_size(limits.max_uncompressed_bytes)}",
            )

    def close(self) -> None:
        self.zip.close()

    def has(self, name: str) -> bool:
        return name in self.entries

    def read(self, name: str) -> bytes:
        info = self.entries.get(name)
        if info is None:
            raise BookError(
                BookCode.CORRUPT,
                f"{self.path.name} is damaged: it refers to a missing file {name!r}.",
            )
        cap = min(info.file_size, self.limits.max_uncompressed_bytes) + 1
        if info.file_size < cap:
            data = self._inflated(info)
            if data is not None:
                return data
        try:
            with self._lock, self.zip.open(info) as fh:  # (zipfile counts its opens unlocked)
                data = fh.read(cap)
        except (
            zipfile.BadZipFile,
            OSError,
            EOFError,
            RuntimeError,
            ValueError,
            NotImplementedError,
            zlib.error,
        ) as exc:
            raise BookError(
                BookCode.CORRUPT, f"{self.path.name} is damaged: {name} cannot be unpacked ({exc})."
            ) from None
        if len(data) > info.file_size:
            raise too_large(self.path, f"{name} is larger than its archive entry says")
        return data

    def _inflated(self, info: zipfile.ZipInfo) -> bytes | None:
        """``read``'s bytes of a plain stored or deflated entry in one read and one inflate
        (``zipfile`` reads and inflates in small steps, checking the CRC at each: a sixth
        of a big book's parse); None for anything else, or anything off (a header that
        does not match its directory entry, a bad CRC, a size that is not the one stated),
        which ``zipfile`` then reads and reports as it does."""
        fp = self.zip.fp
        if (
            fp is None
            or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
            or info.flag_bits & _NOT_PLAIN
        ):
            return None
        try:
            fd = fp.fileno()
            name = info.orig_filename
            head = os.pread(fd, _LOCAL.size + len(name.encode("utf-8")), info.header_offset)
            if len(head) < _LOCAL.size:
                return None
            fields = _LOCAL.unpack_from(head)
            if fields[0] != b"PK\x03\x04":
                return None
            name_size, extra_size = fields[10], fields[11]
            raw_name = head[_LOCAL.size : _LOCAL.size + name_size]
            encoding = (
                "utf-8"
                if fields[3] & 0x800
                else (getattr(self.zip, "metadata_encoding", None) or "cp437")
            )
            if len(raw_name) != name_size or raw_name.decode(encoding) != name:
                return None
            start = info.header_offset + _LOCAL.size + name_size + extra_size
            end = getattr(info, "_end_offset", None)
            if end is not None and start + info.compress_size > end:
                return None
            raw = os.pread(fd, info.compress_size, start)
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        if len(raw) != info.compress_size:
            return None
        if info.compress_type == zipfile.ZIP_STORED:
            data = raw
        else:
            inflate = _inflater.decompressobj(-15)
            try:
                data = inflate.decompress(raw, info.file_size + 1)
            except _inflater.error:
                return None
            if not inflate.eof:
                return None
        if len(data) != info.file_size or _inflater.crc32(data) != info.CRC:
            return None
        return data


_inflater: ModuleType = zlib
try:  # zlib-ng's inflate: the same bytes in half zlib's time (issue 41), when installed
    from zlib_ng import zlib_ng

    _inflater = zlib_ng
except ImportError:  # pragma: no cover - the dependency is declared
    pass
_LOCAL = struct.Struct("<4s2B4HL2L2H")  # a member's local header (zipfile.structFileHeader)
_NOT_PLAIN = 0x1 | 0x20 | 0x40  # encrypted, patched data, strong encryption


def _utf8_name(info: zipfile.ZipInfo) -> str:
    """An entry's name. Without the zip's UTF-8 flag Python reads names as code page 437;
    names that are valid UTF-8 (what ``zip`` writes under a POSIX locale, and several EPUB
    tools) are read as UTF-8, as calibre does."""
    name = info.filename
    if info.flag_bits & 0x800 or name.isascii():
        return name
    try:
        return name.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return name


def _check_container(path: Path, zf: zipfile.ZipFile) -> None:
    """An OCF container is one zip, stored or deflated: a split archive or another
    compression method is an error the reader is told about."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - 65557))
            tail = fh.read()
    except OSError:
        return
    end = tail.rfind(b"PK\x05\x06")
    if end >= 0 and len(tail) >= end + 8:
        disk, first = struct.unpack_from("<HH", tail, end + 4)
        if disk or first:
            raise BookError(
                BookCode.UNSUPPORTED,
                f"{path.name} is one part of a zip split into several files; an EPUB must be one file.",
                hint="Join the parts into one archive (or download the book again).",
            )
    for info in zf.infolist():
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            method = {zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "LZMA"}.get(
                info.compress_type, f"method {info.compress_type}"
            )
            raise BookError(
                BookCode.UNSUPPORTED,
                f"{path.name} is compressed with {method}, which EPUB does not allow (only "
                "Deflate), so Margin cannot open it.",
                hint="Export the book again from the program that made it.",
            )


def _xml(data: bytes, path: Path, what: str) -> ET.Element:
    if _ENTITY.search(data[:65536]):
        raise BookError(
            BookCode.CORRUPT,
            f"{path.name} is damaged or hostile: its {what} declares XML entities.",
        )
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise BookError(
            BookCode.CORRUPT, f"{path.name} is damaged: its {what} is not valid XML ({exc})."
        ) from None


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _find_opf(arc: EpubArchive) -> str:
    if arc.has("META-INF/container.xml"):
        root = _xml(arc.read("META-INF/container.xml"), arc.path, "container.xml")
        for el in root.iter():
            if _local(el.tag) == "rootfile" and el.get("full-path"):
                return el.get("full-path", "")
    candidates = [n for n in arc.entries if n.lower().endswith(".opf")]
    if candidates:
        return sorted(candidates)[0]
    raise BookError(
        BookCode.CORRUPT, f"{arc.path.name} is not a valid EPUB: it has no package (OPF) file."
    )


def _check_drm(arc: EpubArchive) -> None:
    if arc.has("META-INF/rights.xml") and not arc.has("META-INF/encryption.xml"):
        pass
    if not arc.has("META-INF/encryption.xml"):
        return
    root = _xml(arc.read("META-INF/encryption.xml"), arc.path, "encryption.xml")
    for data in root.iter():
        if _local(data.tag) != "EncryptedData":
            continue
        method = ""
        uri = ""
        for el in data.iter():
            if _local(el.tag) == "EncryptionMethod":
                method = el.get("Algorithm", "")
            if _local(el.tag) == "CipherReference":
                uri = el.get("URI", "")
        is_font = uri.lower().endswith((".ttf", ".otf", ".woff", ".woff2"))
        if method in FONT_OBFUSCATION and is_font:
            continue
        if is_font:
            continue
        raise BookError(
            BookCode.DRM,
            f"{arc.path.name} is DRM-protected: its text is encrypted, so Margin cannot read it.",
            hint="Open it in the app of the shop that sold it, or use a DRM-free copy.",
        )


def _text(el: ET.Element | None) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def read_resource(epub_path: Path, name: str, *, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """Bytes of one file inside the EPUB (an image the reader shows). ``name`` is the path
    inside the archive, with or without a leading slash; anything escaping it is refused."""
    clean = posixpath.normpath(unquote(name).lstrip("/"))
    if clean.startswith(("..", "/")) or clean in ("", "."):
        raise BookError(BookCode.NOT_FOUND, f"{name!r} is not a file inside {epub_path.name}.")
    arc = EpubArchive(epub_path, limits)
    try:
        if not arc.has(clean):
            raise BookError(BookCode.NOT_FOUND, f"{name!r} is not a file inside {epub_path.name}.")
        return arc.read(clean)
    finally:
        arc.close()
