"""Settings: which model answers (Claude, a local server, or none), the API key (kept in the
system keyring, never in Margin's files), the model, the loop strategy, spoiler safety and
limits, and where the data is."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Coroutine

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.agent.probe import PROBE_FILE, ProbeStore, probe_key
from core.api_key import get_api_key, key_storage_available, set_api_key
from core.errors import MarginError
from core.paths import Paths
from core.settings import (
    DEFAULT_MODEL,
    LOCAL_DEFAULT_URL,
    Settings,
    load_settings,
    save_settings,
)
from desktop.tasks import TaskKeeper

PROVIDERS = (
    ("anthropic", "Claude (Anthropic API)"),
    ("local", "Local server (Ollama, llama.cpp)"),
    ("passages", "No model: passages only"),
)
STRATEGIES = (
    ("auto", "Chosen for the model (recommended)"),
    ("tool-use", "Tools: the model searches and reads (best)"),
    ("always-retrieve", "Search first, then answer (models without tools)"),
    ("llm-only", "Model only, no book access"),
)


class SettingsDialog(QDialog):
    settingsChanged = Signal()

    def __init__(self, paths: Paths, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Margin settings")
        self.paths = paths
        self._tasks = TaskKeeper()
        try:
            current = load_settings(paths)
            problem = ""
        except MarginError as exc:
            current = Settings()
            problem = str(exc)
        self.current = current  # what the dialog does not show is saved as it was
        self.provider = QComboBox()
        self.provider.setAccessibleName("Provider")
        for key, label in PROVIDERS:
            self.provider.addItem(label, key)
        chosen = (
            current.provider
            if current.provider != "auto"
            else ("anthropic" if get_api_key() else "passages")
        )
        self.provider.setCurrentIndex(max(0, self.provider.findData(chosen)))
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setAccessibleName("API key")
        self.key.setPlaceholderText(
            "sk-ant-… (stored in the system keyring)"
            if get_api_key() is None
            else "A key is saved; type to replace it"
        )
        self.key_note = QLabel(
            ""
            if key_storage_available()
            else "No system keyring was found: a key you enter is kept for this session only."
        )
        self.key_note.setWordWrap(True)
        self.base_url = QLineEdit(current.base_url)
        self.base_url.setAccessibleName("Server address")
        self.base_url.setPlaceholderText("Claude's API" if chosen != "local" else LOCAL_DEFAULT_URL)
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.setAccessibleName("Model")
        edit = self.model.lineEdit()
        if edit is not None:
            edit.setAccessibleName("Model name")
        self.model.addItem(current.model or DEFAULT_MODEL)
        self.refresh_models = QPushButton("Refresh list")
        self.refresh_models.setAccessibleName("List models from the server")
        self.refresh_models.clicked.connect(lambda: self._start(self._list_models()))
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(self.refresh_models)
        self.strategy = QComboBox()
        self.strategy.setAccessibleName("How the model uses the book")
        for key, label in STRATEGIES:
            self.strategy.addItem(label, key)
        self.strategy.setCurrentIndex(max(0, self.strategy.findData(current.strategy)))
        self.strategy_note = QLabel(
            "Small local models often answer without calling any tool, so their answers are "
            "not checked against the book. If yours never searches the book, choose "
            "“Search first, then answer”: Margin then finds the passages itself."
        )
        self.strategy_note.setWordWrap(True)
        self.reading = QComboBox()  # what a local model reads of the passages found
        self.reading.setAccessibleName("What a local model reads")
        self.reading.addItem("Speed: the best sentences (the first word comes sooner)", "speed")
        self.reading.addItem("Breadth: more of each passage (slower to start)", "breadth")
        self.reading.setCurrentIndex(max(0, self.reading.findData(current.local_reading)))
        self.probe_note = QLabel("")  # what the one-time probe found about this model's tools
        self.probe_note.setWordWrap(True)
        self.probe_note.setAccessibleName("Tool calls of this model")
        self.use_retrieve = QPushButton("Use “Search first, then answer”")
        self.use_retrieve.setAccessibleName("Use search first for a local model")
        self.use_retrieve.clicked.connect(
            lambda: self.strategy.setCurrentIndex(self.strategy.findData("always-retrieve"))
        )
        self.budget = QDoubleSpinBox(
            minimum=0, maximum=10000, decimals=2, value=current.budget_per_book_usd, prefix="$"
        )
        self.budget.setSpecialValueText("No budget")
        self.budget.setAccessibleName("Budget per book")
        self.budget.setToolTip(
            "Margin asks before a question would take a book's conversations past this cost."
        )
        self.spoiler = QCheckBox("Never read past my page (spoiler-safe)")
        self.spoiler.setChecked(current.spoiler_safe)
        self.turns = QSpinBox(minimum=1, maximum=50, value=current.limits.max_turns)
        self.turns.setAccessibleName("Steps per question")
        self.tool_calls = QSpinBox(minimum=1, maximum=100, value=current.limits.max_tool_calls)
        self.tool_calls.setAccessibleName("Tool calls per question")
        self.deadline = QDoubleSpinBox(
            minimum=10, maximum=1800, value=current.limits.deadline_s, suffix=" s"
        )
        self.deadline.setAccessibleName("Time limit per question")
        self.local_wait = QDoubleSpinBox(
            minimum=30, maximum=3600, decimals=0, value=current.limits.local_deadline_s, suffix=" s"
        )
        self.local_wait.setAccessibleName("Time a local model may take")
        self.local_wait.setToolTip(
            "A local model reads the passages before its first word (about 30 s per 1,000 "
            "words on a small computer): Margin waits this long for its answer."
        )
        self.test_button = QPushButton("Test connection")
        self.test_button.setAccessibleName("Test connection")
        self.test_button.clicked.connect(lambda: self._start(self._test()))
        self.result_label = QLabel(problem)
        self.result_label.setWordWrap(True)
        self.result_label.setAccessibleName("Connection result")
        data = QLabel(f"Your library and conversations: {paths.data}")
        data.setWordWrap(True)
        open_data = QPushButton("Open folder")
        open_data.clicked.connect(
            lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(paths.data)))
        )
        data_row = QHBoxLayout()
        data_row.addWidget(data, 1)
        data_row.addWidget(open_data)
        form = QFormLayout()
        form.addRow("Answers from", self.provider)
        form.addRow("API key", self.key)
        form.addRow("", self.key_note)
        form.addRow("Server address", self.base_url)
        model_label = QLabel("Model")
        model_label.setBuddy(self.model)  # (a row of widgets: the label names the combo box)
        form.addRow(model_label, model_row)
        form.addRow("Strategy", self.strategy)
        form.addRow("", self.strategy_note)
        form.addRow("Tool calls", self.probe_note)
        form.addRow("Local model reads", self.reading)
        form.addRow("", self.use_retrieve)
        form.addRow("Budget per book", self.budget)
        form.addRow("", self.spoiler)
        form.addRow("Steps per question", self.turns)
        form.addRow("Tool calls per question", self.tool_calls)
        form.addRow("Time limit", self.deadline)
        form.addRow("Local model time limit", self.local_wait)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.result_label, 1)
        layout.addLayout(test_row)
        layout.addLayout(data_row)
        from desktop.sources.sync_settings import SyncSection

        self.sync_section = SyncSection(paths, self)  # accounts, calibre, catalogues
        layout.addWidget(self.sync_section)
        layout.addWidget(buttons)
        self.provider.currentIndexChanged.connect(self._provider_changed)
        self._provider_changed()

    def _provider_changed(self) -> None:
        kind = self.provider.currentData()
        self.key.setEnabled(kind == "anthropic")
        self.base_url.setEnabled(kind != "passages")
        self.model.setEnabled(kind != "passages")
        self.refresh_models.setEnabled(kind != "passages")
        self.base_url.setPlaceholderText(
            LOCAL_DEFAULT_URL if kind == "local" else "Claude's API (default)"
        )
        self.strategy_note.setVisible(kind == "local")
        self.use_retrieve.setVisible(kind == "local")
        self.reading.setEnabled(kind == "local")
        self.probe_note.setText(self.probe_text())

    def probe_text(self) -> str:
        """The Settings line for the probe of tool calling (``core.agent.probe``)."""
        kind = str(self.provider.currentData())
        if kind != "local":
            return "Claude searches the book itself." if kind != "passages" else "No model."
        url = self.base_url.text().strip().rstrip("/") or LOCAL_DEFAULT_URL
        model = self.model.currentText().strip()
        probe = ProbeStore(self.paths.config / PROBE_FILE).get(probe_key(kind, url, model))
        if probe is None:
            return f"Not checked yet: Margin checks once, at the first question to {model}."
        return probe.sentence(model)

    def chosen(self) -> Settings:
        limits = dataclasses.replace(
            self.current.limits,  # the limits set in settings.toml alone are kept
            max_turns=self.turns.value(),
            max_tool_calls=self.tool_calls.value(),
            deadline_s=self.deadline.value(),
            local_deadline_s=self.local_wait.value(),
        )
        return dataclasses.replace(
            self.current,  # spoiler_verify, previously_after_days…: kept as they were
            provider=str(self.provider.currentData()),
            base_url=self.base_url.text().strip().rstrip("/"),
            model=self.model.currentText().strip() or DEFAULT_MODEL,
            strategy=str(self.strategy.currentData()),
            spoiler_safe=self.spoiler.isChecked(),
            limits=limits,
            budget_per_book_usd=round(self.budget.value(), 2),
            local_reading=str(self.reading.currentData()),
        )

    def _key(self) -> str | None:
        typed = self.key.text().strip()
        return typed or get_api_key()

    def save(self) -> bool:
        settings = self.chosen()
        if settings.base_url and not settings.base_url.startswith(("http://", "https://")):
            self.result_label.setText("The server address must start with http:// or https://.")
            return False
        try:
            if self.key.text().strip():
                where = set_api_key(self.key.text())
                self.key.clear()
                if where == "session":
                    self.result_label.setText(
                        "Saved. No system keyring is available, so the key lasts until Margin closes."
                    )
            save_settings(self.paths, settings)
        except (MarginError, OSError) as exc:
            self.result_label.setText(str(exc))
            return False
        self.settingsChanged.emit()
        self.accept()
        return True

    def _start(self, coro: Coroutine[object, object, None]) -> asyncio.Task[None]:
        return self._tasks.start(coro)

    async def _test(self) -> None:
        from core.agent.service import test_connection

        self.result_label.setText("Testing…")
        self.test_button.setEnabled(False)
        try:
            text = await test_connection(self.chosen(), self._key())
            self.result_label.setText(text)
        except MarginError as exc:
            self.result_label.setText(str(exc))
        finally:
            self.test_button.setEnabled(True)

    async def _list_models(self) -> None:
        from core.agent.service import list_models

        try:
            models = await list_models(self.chosen(), self._key())
        except MarginError as exc:
            self.result_label.setText(str(exc))
            return
        current = self.model.currentText()
        self.model.clear()
        self.model.addItems(models or [current])
        self.model.setCurrentText(current if current in models or not models else models[0])
        self.result_label.setText(
            f"{len(models)} models available."
            if models
            else "The server does not list its models; type the name."
        )
