"""Highlights, notes and threads in the window: the Highlights side panel (``panel``) and its
edits (``tools``), how a highlight looks (``look``), the Notes tab (``notes_panel``), the
Threads tab and its wiring (``threads_panel``), and the marks in the page's margin
(``margin_marks``)."""
