"""OPDS 1.2 catalogues: navigation and acquisition feeds (Atom), OpenSearch, pagination,
covers and summaries, and downloading a book.

Feeds are untrusted: read with a size cap (``MAX_FEED``), refused when they declare entities
or a DOCTYPE (no entity expansion), and anything that is not an Atom feed is an error in
words, never a traceback."""

from __future__ import annotations

import re
import urllib.parse
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from core.sync.errors import SyncError
from core.sync.http import host_of, request, server_failed

ATOM = "{http://www.w3.org/2005/Atom}"
DC = "{http://purl.org/dc/terms/}"
OSD = "{http://a9.com/-/spec/opensearch/1.1/}"
MAX_FEED = 8 * 1024 * 1024  # a feed larger than this is refused, never parsed
MAX_BOOK = 500 * 1024 * 1024
WHAT = "the catalogue"
ACQUISITION = "http://opds-spec.org/acquisition"
# formats Margin reads, best first
BOOK_TYPES = (
    "application/epub+zip",
    "application/pdf",
    "text/plain",
    "text/markdown",
    "text/html",
    "application/x-cbz",
    "application/vnd.comicbook+zip",
)
SUFFIXES = {
    "application/epub+zip": ".epub",
    "application/pdf": ".pdf",
    "text/plain": ".txt",
    "text/markdown": ".md",
    "text/html": ".html",
    "application/x-cbz": ".cbz",
    "application/vnd.comicbook+zip": ".cbz",
}


@dataclass(frozen=True)
class Link:
    href: str
    rel: str = ""
    type: str = ""
    title: str = ""


@dataclass(frozen=True)
class Entry:
    id: str
    title: str
    authors: tuple[str, ...] = ()
    summary: str = ""
    links: tuple[Link, ...] = ()

    @property
    def navigation(self) -> Link | None:
        """Where the entry leads when it is a catalogue of its own."""
        for link in self.links:
            feed = "opds-catalog" in link.type or link.type == "application/atom+xml"
            if feed and not link.rel.startswith(ACQUISITION) and "image" not in link.rel:
                return link
        return None

    @property
    def acquisitions(self) -> list[Link]:
        return [link for link in self.links if link.rel.startswith(ACQUISITION)]

    def best_download(self) -> Link | None:
        """The acquisition link in the format Margin reads best; None when none fits."""
        links = self.acquisitions
        for wanted in BOOK_TYPES:
            for link in links:
                if link.type.split(";")[0].strip() == wanted:
                    return link
        return None

    @property
    def cover(self) -> str:
        for rel in ("http://opds-spec.org/image/thumbnail", "http://opds-spec.org/image"):
            for link in self.links:
                if link.rel == rel:
                    return link.href
        return ""


@dataclass(frozen=True)
class Feed:
    url: str
    title: str
    entries: tuple[Entry, ...] = ()
    next: str = ""
    previous: str = ""
    search: str = ""  # an OpenSearch description's address, or a template with {searchTerms}
    links: tuple[Link, ...] = field(default_factory=tuple)

    @property
    def kind(self) -> str:
        """ "acquisition" when its entries are books, else "navigation"."""
        return "acquisition" if any(e.acquisitions for e in self.entries) else "navigation"

    def find(self, ref: str) -> Entry:
        """The entry ``ref`` names: its number (1-based), id, or the start of its title."""
        if ref.isdigit() and 1 <= int(ref) <= len(self.entries):
            return self.entries[int(ref) - 1]
        for entry in self.entries:
            if entry.id == ref:
                return entry
        lowered = ref.casefold()
        matches = [e for e in self.entries if e.title.casefold().startswith(lowered)]
        if len(matches) == 1:
            return matches[0]
        raise SyncError(
            "not_found" if not matches else "ambiguous",
            f"No entry of {self.title or 'the feed'} is {ref!r}."
            if not matches
            else f"{len(matches)} entries of {self.title or 'the feed'} start with {ref!r}.",
            hint="Use the entry's number from 'margin opds browse URL'.",
        )


def _safe_xml(data: bytes, url: str) -> ET.Element:
    head = data[:4096].lstrip()
    if head[:14].lower() == b"<!doctype html" or head[:5].lower() == b"<html":
        raise _not_a_feed(url, "it is a web page, not XML")
    if b"<!DOCTYPE" in data[:65536] or b"<!ENTITY" in data[:65536]:
        raise SyncError(
            "bad_feed",
            f"The catalogue at {host_of(url)} sent a feed with declarations Margin does not "
            "read (a DOCTYPE or entities).",
        )
    if not head.startswith(b"<"):
        raise _not_a_feed(url, "it is not XML")
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise _not_a_feed(url, f"its XML is broken: {exc}") from None


def _not_a_feed(url: str, why: str) -> SyncError:
    return SyncError(
        "bad_feed",
        f"The address {url} does not give an OPDS catalogue ({why}).",
        hint="Check the address: a catalogue is an Atom feed (often ending in /opds).",
    )


def _links(el: ET.Element, base: str) -> tuple[Link, ...]:
    return tuple(
        Link(
            urllib.parse.urljoin(base, link.get("href", "")),
            link.get("rel", ""),
            link.get("type", ""),
            link.get("title", ""),
        )
        for link in el.findall(f"{ATOM}link")
        if link.get("href")
    )


def _text(el: ET.Element | None) -> str:
    if el is None:
        return ""
    return re.sub(r"\s+", " ", "".join(el.itertext())).strip()


def parse_feed(data: bytes, url: str) -> Feed:
    """A feed from its bytes (``url``: where it came from, for relative links)."""
    root = _safe_xml(data, url)
    if root.tag != f"{ATOM}feed":
        raise _not_a_feed(url, "it is XML but not an Atom feed")
    links = _links(root, url)
    entries = []
    for el in root.findall(f"{ATOM}entry"):
        authors = tuple(_text(a.find(f"{ATOM}name")) for a in el.findall(f"{ATOM}author"))
        entries.append(
            Entry(
                id=_text(el.find(f"{ATOM}id")),
                title=_text(el.find(f"{ATOM}title")) or "(untitled)",
                authors=tuple(a for a in authors if a),
                summary=_text(el.find(f"{ATOM}summary")) or _text(el.find(f"{ATOM}content")),
                links=_links(el, url),
            )
        )

    def rel(name: str) -> str:
        return next((link.href for link in links if link.rel == name), "")

    return Feed(
        url=url,
        title=_text(root.find(f"{ATOM}title")),
        entries=tuple(entries),
        next=rel("next"),
        previous=rel("previous") or rel("prev"),
        search=rel("search"),
        links=links,
    )


HEADERS = {"Accept": "application/atom+xml, application/xml;q=0.9, */*;q=0.1"}


def fetch(url: str, *, max_bytes: int = MAX_FEED) -> Feed:
    """The feed at ``url``."""
    resp = request("GET", url, headers=HEADERS, max_body=max_bytes, what=WHAT)
    if resp.status == 401:
        raise SyncError(
            "unauthorized",
            f"The catalogue at {host_of(url)} asks for a user name and password.",
            hint="Margin does not yet sign in to catalogues; use one that is open.",
        )
    if resp.status != 200:
        raise server_failed(resp.status, WHAT, url)
    return parse_feed(resp.body, resp.url or url)


def search_url(feed: Feed, terms: str) -> str:
    """The address of a search of ``feed``'s catalogue for ``terms`` (OpenSearch)."""
    if not feed.search:
        raise SyncError("no_search", f"{feed.title or 'This catalogue'} offers no search.")
    template = feed.search
    if "{searchTerms" not in template:
        resp = request("GET", template, max_body=256 * 1024, what=WHAT)
        if resp.status != 200:
            raise server_failed(resp.status, WHAT, template)
        root = _safe_xml(resp.body, template)
        urls = root.findall(f"{OSD}Url") or root.findall("Url")
        chosen = next((u for u in urls if "atom" in u.get("type", "")), urls[0] if urls else None)
        if chosen is None or not chosen.get("template"):
            raise SyncError(
                "no_search", f"The catalogue at {host_of(template)} describes no search."
            )
        template = urllib.parse.urljoin(template, chosen.get("template", ""))
    filled = re.sub(r"\{searchTerms\??\}", urllib.parse.quote(terms), template)
    return re.sub(r"\{[^}]+\?\}", "", filled)  # optional parameters left empty


def download(link: Link, *, max_bytes: int = MAX_BOOK) -> tuple[bytes, str]:
    """The book behind an acquisition link: (bytes, file suffix)."""
    resp = request("GET", link.href, max_body=max_bytes, timeout=120.0, what=WHAT)
    if resp.status != 200:
        raise server_failed(resp.status, WHAT, link.href)
    kind = link.type.split(";")[0].strip() or resp.headers.get("Content-Type", "")
    suffix = SUFFIXES.get(kind.split(";")[0].strip(), "")
    if not suffix:
        path = urllib.parse.urlsplit(resp.url or link.href).path
        suffix = ("." + path.rsplit(".", 1)[-1].lower()) if "." in path[-6:] else ".epub"
    return resp.body, suffix
