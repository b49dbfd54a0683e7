"""Exports of a book's highlights, notes and conversations: Markdown for people (markdown.py, highlights.py, text.py) and JSON records for other tools (annotations.py)."""
