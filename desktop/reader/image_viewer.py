"""A book image shown large in its own window (double-click on an image in the text)."""

from __future__ import annotations

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import QDialog, QLabel, QScrollArea, QVBoxLayout, QWidget


def show_image(parent: QWidget, view: object, url: str) -> QDialog | None:
    """Open ``url`` (a ``book:`` image served by ``view.loadResource``) in a window."""
    image = view.loadResource(2, QUrl(url))  # type: ignore[attr-defined]
    if not isinstance(image, QImage) or image.isNull():
        return None
    dialog = QDialog(parent)
    dialog.setWindowTitle("Image")
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    label = QLabel()
    label.setPixmap(QPixmap.fromImage(image))
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    area = QScrollArea()
    area.setWidget(label)
    area.setWidgetResizable(True)
    layout = QVBoxLayout(dialog)
    layout.addWidget(area)
    dialog.resize(min(image.width() + 40, 1200), min(image.height() + 40, 900))
    dialog.show()  # not modal: the book stays usable
    return dialog
