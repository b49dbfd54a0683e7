"""Walk the accessibility tree of the application named argv[1] over AT-SPI, as Orca sees it,
and print it as JSON lines (role, name, description, states, text). Run with a Python that has
PyGObject and Atspi (Debian: python3-gi, gir1.2-atspi-2.0); the test starts it."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402


def find_app(name: str, timeout: float) -> Atspi.Accessible | None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        desktop = Atspi.get_desktop(0)
        for i in range(desktop.get_child_count()):
            app = desktop.get_child_at_index(i)
            if app is not None and (app.get_name() or "").lower() == name.lower():
                return app
        time.sleep(0.3)
    return None


def walk(node: Atspi.Accessible, depth: int = 0, out: list | None = None) -> list:
    out = [] if out is None else out
    if depth > 40 or len(out) > 3000:
        return out
    states = node.get_state_set()
    item = {
        "role": node.get_role_name(),
        "name": node.get_name() or "",
        "description": node.get_description() or "",
        "focusable": states.contains(Atspi.StateType.FOCUSABLE),
        "showing": states.contains(Atspi.StateType.SHOWING),
        "labelled_by": [],
        "text": "",
    }
    try:
        for relation in node.get_relation_set():
            if relation.get_relation_type() == Atspi.RelationType.LABELLED_BY:
                item["labelled_by"] = [
                    relation.get_target(i).get_name() for i in range(relation.get_n_targets())
                ]
    except Exception:
        pass
    if "Text" in node.get_interfaces():
        try:
            count = Atspi.Text.get_character_count(node)
            item["text"] = Atspi.Text.get_text(node, 0, min(count, 4000))
            item["caret"] = Atspi.Text.get_caret_offset(node)
        except Exception:
            pass
    out.append(item)
    for i in range(node.get_child_count()):
        child = node.get_child_at_index(i)
        if child is not None:
            walk(child, depth + 1, out)
    return out


def main() -> int:
    app = find_app(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 20)
    if app is None:
        print(json.dumps({"error": f"no application named {sys.argv[1]} on the AT-SPI bus"}))
        return 1
    for item in walk(app):
        print(json.dumps(item))
    sys.stdout.flush()
    if os.environ.get("WALKED"):  # tell the app the tree is read (atspi_app.py)
        Path(os.environ["WALKED"]).touch()
    if len(sys.argv) > 3:  # then listen for announcements that long
        listen(float(sys.argv[3]))
    return 0


def listen(seconds: float) -> None:
    """Print each announcement (an AT-SPI "object:announcement" event) heard in ``seconds``."""
    from gi.repository import GLib

    def heard(event: Atspi.Event) -> None:
        print(json.dumps({"announcement": str(event.any_data), "kind": event.type}), flush=True)

    listener = Atspi.EventListener.new(heard)
    listener.register("object:announcement")
    GLib.timeout_add(int(seconds * 1000), lambda: Atspi.event_quit() or False)
    Atspi.event_main()


if __name__ == "__main__":
    sys.exit(main())
