"""The main window (``main_window``) and its controllers: what shows and how (``layout``),
what it does with books (``books``), its dialogs and extra panels (``panels``), its menus
(``menus``) and what it remembers (``preferences``)."""
