"""Where books come from besides files the reader picks: a calibre library (``calibre``,
``calibre_import``) and OPDS catalogues (``opds``, ``opds_feed``). Nothing here writes to an
outside library: calibre's ``metadata.db`` is opened read-only."""
