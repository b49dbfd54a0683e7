"""How the window's process runs: the exception hook, start-up timing, the garbage collector's policy."""
