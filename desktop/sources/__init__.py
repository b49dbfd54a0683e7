"""The window's parts for Margin among the reader's other tools: the Sync menu (KOReader
progress, sync between computers, calibre libraries, OPDS catalogues), the Settings section
for their accounts, and the catalogue browser. Every network or disk step runs on a worker
thread (``desktop.tasks.run_blocking``); errors show their sentence, never a traceback."""
