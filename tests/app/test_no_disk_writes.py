"""A session writes nothing to disk: an uploaded file and everything derived from it stay in
memory, on every page.

Two complementary checks while the app runs in AppTest (upload a file, then visit every page of
``app_pages/``):

(Then on the Export page the report is built, charts rendered by vl-convert and the PDF
by fpdf2, and the masked file prepared in every format.)

1. hooks on the ways Python code writes files (``open`` / ``io.open`` / ``os.open`` in a
   writing mode, ``pathlib.Path.write_*``, ``tempfile.*``, ``shutil`` copies and moves,
   ``os.mkdir`` / ``os.rename`` / ``os.replace``) record every write outside an allow-list
   (Python's own ``__pycache__`` and the pytest temporary folder);
2. the repository tree and ``/tmp`` are snapshot (names, sizes and modification times) before
   and after; every file that appeared or changed must not contain the upload's unique marker.
   (Other programs may write there at the same time, so the snapshot check looks for the data,
   not for any change at all.)

An oversized upload is refused with the core's clear message, and writes nothing either.
"""

from __future__ import annotations

import builtins
import io
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import app_helpers  # noqa: F401  (puts the repository on sys.path)
import numpy as np
import pandas as pd
import pytest
from app_helpers import (
    APP,
    ROOT,
    TIMEOUT,
    assert_clean,
    fresh_app,
    goto,
    metric_value,
    page_cache,
    texts,
)
from release_files import RECIPE, visits_csv
from streamlit.testing.v1 import AppTest

from deid_core.io.export import FORMATS
from deid_core.io.reading import MAX_UPLOAD_BYTES
from deid_core.release_summary import RELEASE_PARAM
from deid_core.share import configuration_json

MARKER = "QZXDISKMARK"
#: The recipient's page, opened only through a release link (its own test below).
RECIPIENT_PAGE = "release"
PAGES = sorted(
    path.stem for path in (ROOT / "app_pages").glob("*.py") if path.stem != RECIPIENT_PAGE
)
SKIP_DIRS = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis"}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class WriteRecorder:
    """Records file writes outside the allow-list."""

    def __init__(self, allowed: list[Path]) -> None:
        self.allowed = [str(path) for path in allowed]
        self.writes: list[tuple[str, str]] = []

    def record(self, kind: str, target: object) -> None:
        if isinstance(target, int):  # a file descriptor already open
            return
        path = os.path.abspath(os.fsdecode(target)) if target is not None else "<temp>"
        if "__pycache__" in path or path == os.devnull:
            return
        if any(path.startswith(allowed) for allowed in self.allowed):
            return
        self.writes.append((kind, path))


def _writes_mode(mode: object) -> bool:
    return isinstance(mode, str) and any(flag in mode for flag in "wax+")


@pytest.fixture
def recorder(monkeypatch, tmp_path_factory) -> Iterator[WriteRecorder]:
    record = WriteRecorder([tmp_path_factory.getbasetemp()])
    real_open, real_os_open = builtins.open, os.open

    def open_hook(file, mode="r", *args, **kwargs):
        if _writes_mode(mode):
            record.record(f"open({mode!r})", file)
        return real_open(file, mode, *args, **kwargs)

    def os_open_hook(path, flags, *args, **kwargs):
        if flags & WRITE_FLAGS:
            record.record("os.open", path)
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", open_hook)
    monkeypatch.setattr(io, "open", open_hook)
    monkeypatch.setattr(os, "open", os_open_hook)

    def wrap(owner, name: str, target_of):
        real = getattr(owner, name)

        def hook(*args, **kwargs):
            record.record(f"{getattr(owner, '__name__', owner)}.{name}", target_of(args, kwargs))
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, hook)

    first = lambda args, kwargs: args[0] if args else None  # noqa: E731
    second = lambda args, kwargs: args[1] if len(args) > 1 else kwargs.get("dst")  # noqa: E731
    temp = lambda args, kwargs: kwargs.get("dir") or None  # noqa: E731
    for name in ("write_bytes", "write_text", "touch", "mkdir"):
        wrap(Path, name, first)
    for name in ("mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryFile", "TemporaryDirectory"):
        wrap(tempfile, name, temp)
    for name in ("copy", "copy2", "copyfile", "copytree", "move", "copyfileobj"):
        if name == "copyfileobj":
            continue  # between open file objects: the opens are recorded
        wrap(shutil, name, second)
    for name in ("mkdir", "makedirs"):
        wrap(os, name, first)
    for name in ("rename", "replace"):
        wrap(os, name, second)
    yield record


def snapshot(roots: list[Path]) -> dict[str, tuple[int, int]]:
    """path -> (size, mtime_ns) of every file under ``roots`` (skipping caches and the venv)."""
    found: dict[str, tuple[int, int]] = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("bash_jobs")]
            for name in files:
                path = os.path.join(folder, name)
                try:
                    info = os.stat(path, follow_symlinks=False)
                except OSError:
                    continue
                found[path] = (info.st_size, info.st_mtime_ns)
    return found


def files_holding(paths: list[str], needle: bytes, limit: int = 200 * 1024 * 1024) -> list[str]:
    holding = []
    for path in paths:
        try:
            if os.path.getsize(path) > limit or not os.path.isfile(path):
                continue
            with open(path, "rb") as handle:  # reading only
                if needle in handle.read():
                    holding.append(path)
        except OSError:
            continue
    return holding


def cohort_csv(n: int = 120) -> bytes:
    rng = np.random.default_rng(11)
    frame = pd.DataFrame(
        {
            "person_id": np.arange(1, n + 1),
            "sex": rng.choice(["F", "M"], n),
            "age": rng.integers(20, 80, n),
            "region": rng.choice([f"{MARKER}_north", f"{MARKER}_south", "east"], n),
            "dose": rng.gamma(1.0, 0.5, n).round(3),
            "death": rng.integers(0, 2, n),
        }
    )
    return frame.to_csv(index=False).encode()


ROOTS = [ROOT, Path(tempfile.gettempdir())]


def test_a_session_writes_nothing_to_disk(recorder):
    before = snapshot(ROOTS)
    app = fresh_app()
    goto(app, "data")
    app.file_uploader[0].upload("private_cohort.csv", cohort_csv(), "text/csv")
    app.run()
    assert_clean(app)
    assert metric_value(app.sidebar, "Records") == "120"
    for page in PAGES:
        goto(app, page)
    # The exports and the report (charts rendered by vl-convert, the PDF by fpdf2) too.
    goto(app, "export")
    app.button(key="export.build_report").click().run()
    assert_clean(app)
    for fmt in FORMATS:
        app.selectbox(key="export.format").set_value(fmt).run()
        app.button(key="export.prepare").click().run()
        assert_clean(app)
    after = snapshot(ROOTS)

    assert recorder.writes == [], recorder.writes
    changed = [path for path, stamp in after.items() if before.get(path) != stamp]
    assert files_holding(changed, MARKER.encode()) == []


def test_a_release_link_and_its_recipient_write_nothing_to_disk(recorder):
    """The custodian uploads an identifiable file, builds the report and its release link;
    a recipient opens the link and loads the masked file: nothing is written, and no file
    that changed holds the source's record numbers."""
    before = snapshot(ROOTS)
    app = fresh_app()
    goto(app, "data")
    app.file_uploader(key="data.upload").upload("visits.csv", visits_csv(), "text/csv")
    app.run()
    app.file_uploader(key="data.recipe_upload").upload(
        "recipe.json", configuration_json(RECIPE).encode(), "application/json"
    )
    app.run()
    assert_clean(app)
    goto(app, "export")
    app.button(key="export.build_report").click().run()
    assert_clean(app)
    (link,) = [c.value for c in app.code if f"?{RELEASE_PARAM}=" in c.value]
    (exported,) = page_cache(app, "export_file")

    recipient = AppTest.from_file(APP, default_timeout=TIMEOUT)
    (param,) = parse_qs(urlsplit(link).query)[RELEASE_PARAM]
    recipient.query_params[RELEASE_PARAM] = param
    recipient.run()
    recipient.file_uploader(key="release.upload").upload("release.csv", exported.data, "text/csv")
    recipient.run()
    assert_clean(recipient)
    assert any("This is the release described" in t for t in texts(recipient.success))
    after = snapshot(ROOTS)

    assert recorder.writes == [], recorder.writes
    changed = [path for path, stamp in after.items() if before.get(path) != stamp]
    assert files_holding(changed, b"MRN7000") == []


def test_an_oversized_upload_is_refused_with_a_clear_message_and_no_write(recorder):
    app = fresh_app()
    goto(app, "data")
    row = f"1,{MARKER},2\n".encode()
    content = b"a,b,c\n" + row * (MAX_UPLOAD_BYTES // len(row) + 1)
    assert len(content) > MAX_UPLOAD_BYTES
    app.file_uploader[0].upload("huge.csv", content, "text/csv")
    app.run()
    assert_clean(app)
    errors = texts(app.error)
    assert any("was not loaded" in e and "50 MB" in e and "'file_bytes'" in e for e in errors), (
        errors
    )
    assert not any(MARKER in e for e in errors)
    assert metric_value(app.sidebar, "Records") == "16,000"  # the demo is kept
    assert recorder.writes == [], recorder.writes


def test_the_hooks_see_writes(recorder):
    """Self-check: each hooked way of writing is recorded (into a "folder" that is a file, so
    every attempt fails and nothing is actually written)."""
    target = Path(__file__) / "out.csv"
    attempts = [
        lambda: open(target, "w"),  # noqa: SIM115
        lambda: io.open(target, "ab"),  # noqa: SIM115, UP020
        lambda: os.open(target, os.O_WRONLY | os.O_CREAT),
        lambda: target.write_text("x"),
        lambda: target.write_bytes(b"x"),
        lambda: tempfile.mkstemp(dir=target.parent),
        lambda: tempfile.NamedTemporaryFile(dir=target.parent),  # noqa: SIM115
        lambda: shutil.copy(__file__, target),
        lambda: os.makedirs(target.parent / "sub"),
    ]
    for attempt in attempts:
        with pytest.raises(OSError):
            attempt()
    assert len(recorder.writes) >= len(attempts), recorder.writes
    assert {path for _, path in recorder.writes} >= {str(target)}
    n_writes = len(recorder.writes)
    with open(__file__, "rb") as handle:  # reading is not recorded
        handle.read(1)
    assert len(recorder.writes) == n_writes
