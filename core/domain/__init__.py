"""The records every layer shares: a parsed book (``book``), a conversation's messages and a
run's records (``messages``), and what tokens cost (``pricing``).

This package sits below the store, the parsers, search and the agent: it imports nothing of
Margin's but ``core.labels``, so any layer may use it (``tests/test_layers.py`` checks).
"""
