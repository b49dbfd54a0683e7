"""Margin among the reader's other tools: reading progress with KOReader (``kosync``) and
sync between the reader's own computers over WebDAV (``webdav``, ``changes``, ``merge``).

Nothing here runs unless the reader turns it on; passwords sit in the keyring
(``secrets``), never in ``settings.toml``, the database or the logs.
"""
