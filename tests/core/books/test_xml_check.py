"""xml_check says a document is valid UTF-8 only when expat read every byte of it as UTF-8
(the EPUB parser then skips its own UTF-8 check before lexbor)."""

from __future__ import annotations

import pytest

from core.books.epubdocs import xml_check, xml_problem

BODY = '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>{}</p></body></html>'


def _doc(text: bytes, head: bytes = b'<?xml version="1.0" encoding="utf-8"?>') -> bytes:
    return head + BODY.encode().replace(b"{}", text)


def test_a_well_formed_utf8_document_is_read_as_utf8() -> None:
    for head in (
        b"",
        b'<?xml version="1.0"?>',
        b"\xef\xbb\xbf<?xml version='1.0' encoding='UTF-8'?>",
    ):
        assert xml_check(_doc("it’s “fine” ☃".encode(), head)) == ("", True)


@pytest.mark.parametrize(
    "data",
    [
        _doc(b"caf\xe9", b'<?xml version="1.0" encoding="iso-8859-1"?>'),  # another encoding
        _doc(b"&nbsp; stops expat early"),  # an undefined entity: not read to the end
        '<?xml version="1.0" encoding="utf-16"?><html/>'.encode("utf-16"),
        b'<!DOCTYPE html [<!ENTITY a "b">]>' + BODY.encode().replace(b"{}", b"&a;"),
    ],
)
def test_anything_else_is_left_to_the_utf8_check(data: bytes) -> None:
    assert xml_check(data)[1] is False


@pytest.mark.parametrize("bad", [b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xe2\x80"])
def test_bytes_that_are_not_utf8_are_a_problem_and_never_utf8(bad: bytes) -> None:
    data = _doc(b"a" + bad + b"b")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    problem, utf8 = xml_check(data)
    assert "not well-formed" in problem and utf8 is False
    assert xml_problem(data) == problem
