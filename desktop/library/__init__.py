"""The library: the cover grid and list (``view``, ``grid``, ``model``, ``covers``,
``cover_images``), the panel around them (``panel``), importing (``import_controller``,
``book_files``) and the library-wide search window (``search``). Importing this package
imports nothing: the start-up path reads ``book_files`` alone."""
