"""A document's bytes go to lexbor unchecked (core.books.htmlbuilder.html_tree): it reads
them as UTF-8, each invalid sequence a U+FFFD, as ``bytes.decode("utf-8", "replace")``
does, whatever the document declares. So the blocks are those of the decoded text."""

from __future__ import annotations

import pytest

from core.books.htmlblocks import html_document

BAD = [
    b"\x80",  # a lone continuation byte
    b"\xc3",  # a lead byte cut short
    b"\xc3(",
    b"\xe2\x80",  # three bytes, two given
    b"\xf0\x9f\x98",  # four bytes, three given
    b"\xed\xa0\x80",  # an encoded surrogate
    b"\xc0\xaf",  # an overlong form
    b"\xf4\x90\x80\x80",  # past U+10FFFF
    b"\xff\xfe",
    b"caf\xe9",  # Latin-1
]
HEADS = [
    b"",
    b'<?xml version="1.0" encoding="iso-8859-1"?>',
    b'<meta charset="iso-8859-1"/>',
    b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1252"/>',
]


def _doc(head: bytes, bad: bytes) -> bytes:
    return (
        head + b"<html><head><title>T" + bad + b"</title></head><body><h1>One" + bad + b"</h1>"
        b"<p>A <b>word</b> x" + bad + b'y, <img src="a.png" alt="p' + bad + b'q"/></p>'
        b"<p>" + bad + b"</p></body></html>"
    )


@pytest.mark.parametrize("head", HEADS)
def test_bytes_read_as_their_text_decoded_with_replacement(head: bytes) -> None:
    for bad in BAD:
        data = _doc(head, bad)
        as_bytes = html_document(data, lambda src: f"book:/{src}", doc="d.xhtml")
        as_text = html_document(
            data.decode("utf-8", "replace"), lambda src: f"book:/{src}", doc="d.xhtml"
        )
        assert as_bytes == as_text, bad
        assert "\ufffd" in as_bytes[1][1].text  # (the sequence read as U+FFFD)


def test_a_byte_order_mark_of_another_encoding_reads_the_same() -> None:
    data = "\ufeff<html><body><p>café</p></body></html>".encode("utf-16-le")
    assert html_document(data) == html_document(data.decode("utf-8", "replace"))
