"""Settings › Sync and sources: the KOReader sync account, the WebDAV folder shared by the
reader's computers, the calibre libraries and the OPDS catalogues Margin keeps.

Passwords go to the keyring through ``core.sync`` (never settings.toml); an account is
checked against its server before it is kept, on a worker thread."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.errors import MarginError
from core.paths import Paths
from core.sync import config
from desktop.tasks import TaskKeeper, run_blocking

OPDS_TABLE = "opds"


def catalogues(paths: Paths) -> list[str]:
    found = config.table(paths, OPDS_TABLE).get("catalogues", [])
    return [str(u) for u in found] if isinstance(found, list) else []


def _password_field(name: str) -> QLineEdit:
    field = QLineEdit()
    field.setEchoMode(QLineEdit.EchoMode.Password)
    field.setAccessibleName(name)
    field.setPlaceholderText("kept in the system keyring")
    return field


class SyncSection(QGroupBox):
    """The section the Settings dialog adds (``SettingsDialog`` lays it out)."""

    def __init__(self, paths: Paths, parent: QWidget | None = None) -> None:
        super().__init__("Sync and book sources", parent)
        self.paths = paths
        self.tasks = TaskKeeper()
        from core.sync.kosync import DEFAULT_SERVER, account
        from core.sync.service import account as webdav_account

        ko = account(paths)
        self.ko_server = QLineEdit(ko.server if ko else DEFAULT_SERVER)
        self.ko_server.setAccessibleName("KOReader sync server")
        self.ko_user = QLineEdit(ko.user if ko else "")
        self.ko_user.setAccessibleName("KOReader sync user")
        self.ko_password = _password_field("KOReader sync password")
        self.ko_login = QPushButton("Log in")
        self.ko_login.setAccessibleName("Log in to KOReader sync")
        self.ko_login.clicked.connect(lambda: self.tasks.start(self._kosync_login(), key="ko"))
        dav = webdav_account(paths)
        self.dav_url = QLineEdit(dav.url if dav else "")
        self.dav_url.setAccessibleName("WebDAV address")
        self.dav_url.setPlaceholderText("https://cloud.example.org/remote.php/dav/files/me/")
        self.dav_user = QLineEdit(dav.user if dav else "")
        self.dav_user.setAccessibleName("WebDAV user")
        self.dav_password = _password_field("WebDAV password")
        self.dav_on = QPushButton("Turn sync on" if not (dav and dav.enabled) else "Turn sync off")
        self.dav_on.setAccessibleName("Turn sync between computers on or off")
        self.dav_on.clicked.connect(lambda: self.tasks.start(self._webdav_toggle(), key="dav"))
        self.calibre = QListWidget()
        self.calibre.setAccessibleName("calibre libraries")
        self.calibre.setMaximumHeight(70)
        from core.sources.calibre_import import libraries

        self.calibre.addItems(libraries(paths))
        add_calibre = QPushButton("Add calibre library…")
        add_calibre.clicked.connect(self._add_calibre)
        self.opds = QListWidget()
        self.opds.setAccessibleName("OPDS catalogues")
        self.opds.setMaximumHeight(70)
        self.opds.addItems(catalogues(paths))
        self.opds_url = QLineEdit()
        self.opds_url.setAccessibleName("Catalogue address")
        self.opds_url.setPlaceholderText("https://example.org/opds")
        add_opds = QPushButton("Add catalogue")
        add_opds.clicked.connect(self._add_catalogue)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Sync status")

        form = QFormLayout()
        form.addRow("KOReader server", self.ko_server)
        form.addRow("User", self.ko_user)
        form.addRow("Password", _row(self.ko_password, self.ko_login))
        form.addRow("WebDAV folder", self.dav_url)
        form.addRow("User", self.dav_user)
        form.addRow("Password", _row(self.dav_password, self.dav_on))
        form.addRow("calibre", _row(self.calibre, add_calibre))
        form.addRow("Catalogues", self.opds)
        form.addRow("", _row(self.opds_url, add_opds))
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.status)

    async def _kosync_login(self) -> None:
        from core.sync.kosync import login

        self.ko_login.setEnabled(False)
        self.status.setText("Checking the KOReader account…")
        try:
            where = await run_blocking(
                login,
                self.paths,
                self.ko_server.text().strip(),
                self.ko_user.text().strip(),
                self.ko_password.text(),
            )
            self.ko_password.clear()
            self.status.setText(
                "Logged in to KOReader sync."
                + ("" if where == "keyring" else " No keyring: the password lasts this session.")
            )
        except MarginError as exc:
            self.status.setText(str(exc))
        finally:
            self.ko_login.setEnabled(True)

    async def _webdav_toggle(self) -> None:
        from core.sync import service

        acc = service.account(self.paths)
        if acc is not None and acc.enabled:
            service.turn_off(self.paths)
            self.dav_on.setText("Turn sync on")
            self.status.setText("Sync between computers is off: nothing is sent.")
            return
        self.dav_on.setEnabled(False)
        self.status.setText("Checking the WebDAV folder…")
        try:
            await run_blocking(
                service.setup,
                self.paths,
                self.dav_url.text().strip(),
                self.dav_user.text().strip(),
                self.dav_password.text(),
            )
            self.dav_password.clear()
            self.dav_on.setText("Turn sync off")
            self.status.setText("Sync between computers is on. File › Sync now syncs.")
        except MarginError as exc:
            self.status.setText(str(exc))
        finally:
            self.dav_on.setEnabled(True)

    def _add_calibre(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "calibre library folder")
        if folder:
            self.add_calibre_folder(folder)

    def add_calibre_folder(self, folder: str) -> None:
        from pathlib import Path

        from core.sources.calibre_import import remember

        if not (Path(folder) / "metadata.db").is_file():
            self.status.setText(f"{folder} is not a calibre library (it has no metadata.db).")
            return
        remember(self.paths, Path(folder).resolve())
        self.calibre.addItem(str(Path(folder).resolve()))
        self.status.setText("Added: its books appear in the library after the next refresh.")

    def _add_catalogue(self) -> None:
        url = self.opds_url.text().strip()
        if not url.startswith(("http://", "https://")):
            self.status.setText("A catalogue address starts with http:// or https://.")
            return
        known = catalogues(self.paths)
        if url not in known:
            config.save_table(self.paths, OPDS_TABLE, {"catalogues": [*known, url]})
            self.opds.addItem(url)
        self.opds_url.clear()


def _row(*widgets: QWidget) -> QWidget:
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    for w in widgets:
        row.addWidget(w, 1 if w is widgets[0] else 0)
    return box
