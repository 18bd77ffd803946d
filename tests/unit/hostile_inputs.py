"""Crafted hostile inputs, shared by the hostile-input tests and ``bench/bench_hostile.py``:
small files that unpack into huge tables, files that lie about their size, and a way to run
one input in a child process with its memory and CPU time capped (``run_limited``).

Each ``make`` function returns the bytes of a file; sizes are parameters so that the tests
can craft bombs just past the bounds, and the bench the sizes the issue reported.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------------------- Parquet
def parquet_repeated_text(rows: int, length: int) -> bytes:
    """One text column: the same ``length``-character value in every row, dictionary-encoded
    (a few hundred KB on disk for gigabytes of text)."""
    column = pa.DictionaryArray.from_arrays(
        pa.array(np.zeros(rows, dtype="int32")), pa.array(["x" * length])
    )
    buffer = io.BytesIO()
    pq.write_table(pa.table({"note": column}), buffer, compression="zstd")
    return buffer.getvalue()


def parquet_zeros(rows: int, columns: int = 1) -> bytes:
    """``columns`` integer columns of zeros (run-length encoded: tiny on disk)."""
    table = pa.table({f"c{j}": pa.array(np.zeros(rows, dtype="int64")) for j in range(columns)})
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    return buffer.getvalue()


def parquet_fixed_width(rows: int, width: int, group_rows: int = 64) -> bytes:
    """One dictionary-encoded ``fixed_size_binary[width]`` column, the same value in every row,
    written ``group_rows`` rows per row group (the writer decodes one group at a time): a few
    hundred KB on disk, ``rows x width`` bytes once decoded, while the footer's sizes of the
    row groups claim far less."""
    values = pa.array([b"x" * width], type=pa.binary(width))
    group = pa.table(
        {"blob": pa.DictionaryArray.from_arrays(pa.array(np.zeros(group_rows, "int32")), values)}
    )
    buffer = io.BytesIO()
    with pq.ParquetWriter(buffer, group.schema, compression="zstd", store_schema=False) as writer:
        for start in range(0, rows, group_rows):
            writer.write_table(group.slice(0, min(group_rows, rows - start)))
    return buffer.getvalue()


def parquet_claiming_rows(width: int = 16_384) -> bytes:
    """A 8,192-row file of one ``fixed_size_binary[width]`` column whose footer claims
    1,048,575 rows (in the file, its row group and its column chunk): a reader that trusts the
    footer allocates ``1,048,575 x width`` bytes (16 GiB at the default width) before it finds
    the pages too short. The counts are patched in place: 8,192 and 1,048,575 both take three
    bytes in Thrift's compact encoding (zigzag varints after the field header 0x16)."""
    column = pa.array([b"x" * width] * 1, type=pa.binary(width))
    table = pa.table({"blob": pa.DictionaryArray.from_arrays(np.zeros(8192, "int32"), column)})
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd", store_schema=False)
    data = buffer.getvalue()
    footer_length = struct.unpack("<I", data[-8:-4])[0]
    start = len(data) - 8 - footer_length
    footer = data[start:-8].replace(b"\x16\x80\x80\x01", b"\x16\xfe\xff\x7f")
    return data[:start] + footer + data[-8:]


# ---------------------------------------------------------------------------- Excel
_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
    'package/2006/content-types"><Default Extension="rels" ContentType="application/'
    'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType='
    '"application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/'
    'vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName='
    '"/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.'
    'spreadsheetml.worksheet+xml"/></Types>'
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.'
    'org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.'
    'openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/'
    'workbook.xml"/></Relationships>'
)
_WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/'
    'spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.'
    'org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.'
    'openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/'
    'sheet1.xml"/></Relationships>'
)


def xlsx_sheet(rows: list[bytes], dimension: str | None = None, repeat: int = 1) -> bytes:
    """A workbook whose one sheet holds the XML ``rows`` (``<row>`` elements) ``repeat`` times,
    with a ``<dimension>`` element when given (compressed: repeated rows cost nothing)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        archive.writestr("xl/workbook.xml", _WORKBOOK)
        archive.writestr("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS)
        with archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as sheet:
            sheet.write(
                b'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.'
                b'openxmlformats.org/spreadsheetml/2006/main">'
            )
            if dimension:
                sheet.write(f'<dimension ref="{dimension}"/>'.encode())
            sheet.write(b"<sheetData>")
            block = b"".join(rows)
            for _ in range(repeat):
                sheet.write(block)
            sheet.write(b"</sheetData></worksheet>")
    return buffer.getvalue()


def xlsx_cells(rows: int, columns: int, dimension: str | None = None) -> bytes:
    """``rows`` x ``columns`` cells holding 1 (about 60 bytes per thousand cells)."""
    row = b"<row>" + b"<c><v>1</v></c>" * columns + b"</row>"
    return xlsx_sheet([row * 100], dimension, repeat=max(1, rows // 100))


def xlsx_far_cell(row: int = 1_048_576, column: str = "XFD") -> bytes:
    """Two cells, A1 and one far away: a reader that pads rows and columns fills the gap."""
    rows = [
        b'<row r="1"><c r="A1"><v>1</v></c></row>',
        f'<row r="{row}"><c r="{column}{row}"><v>2</v></c></row>'.encode(),
    ]
    return xlsx_sheet(rows)


def xlsx_long_cell(n_bytes: int) -> bytes:
    """A workbook of a header and one row whose text cell is ``n_bytes`` long (an inline
    string, written in pieces: a few hundred KB compressed)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        archive.writestr("xl/workbook.xml", _WORKBOOK)
        archive.writestr("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS)
        with archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as sheet:
            sheet.write(
                b'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.'
                b'openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
                b'<row r="1"><c r="A1" t="inlineStr"><is><t>note</t></is></c></row>'
                b'<row r="2"><c r="A2" t="inlineStr"><is><t>'
            )
            block = b"x" * (1 << 20)
            for _ in range(n_bytes // len(block)):
                sheet.write(block)
            sheet.write(b"</t></is></c></row></sheetData></worksheet>")
    return buffer.getvalue()


# ---------------------------------------------------------------------------- text
def csv_zeros(n_bytes: int) -> bytes:
    """A CSV of two columns of zeros, ``n_bytes`` long."""
    return b"a,b\n" + b"0,0\n" * (n_bytes // 4)


def gzip_zeros(n_bytes: int) -> bytes:
    """A gzip file of a CSV of zeros ``n_bytes`` long once unpacked, written in pieces (the
    crafting itself never holds the unpacked text)."""
    buffer = io.BytesIO()
    block = b"0,0\n" * (1 << 18)  # 1 MB
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9, mtime=0) as packed:
        packed.write(b"a,b\n")
        for _ in range(n_bytes // len(block)):
            packed.write(block)
    return buffer.getvalue()


def gzip_long_cell(n_bytes: int) -> bytes:
    """A gzip file of a CSV whose one cell is ``n_bytes`` long, written in pieces."""
    buffer = io.BytesIO()
    block = b"x" * (1 << 20)
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9) as packed:
        packed.write(b"note,n\n")
        for _ in range(n_bytes // len(block)):
            packed.write(block)
        packed.write(b",1\n")
    return buffer.getvalue()


def zip_zeros(n_bytes: int, member: str = "data.csv") -> bytes:
    """A .zip holding one CSV of zeros ``n_bytes`` long, written in pieces."""
    buffer = io.BytesIO()
    block = b"0,0\n" * (1 << 18)
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive,
        archive.open(member, "w", force_zip64=True) as packed,
    ):
        packed.write(b"a,b\n")
        for _ in range(n_bytes // len(block)):
            packed.write(block)
    return buffer.getvalue()


def compressed(content: bytes, extension: str, member: str = "data.csv") -> bytes:
    """``content`` compressed as ``.gz``, ``.bz2``, ``.xz`` or alone in a ``.zip``; the same
    bytes every time."""
    if extension == ".gz":
        # No time stamp: the same bytes in every process (pytest-xdist's workers must collect
        # the same test ids, and tests parametrized with these bytes are named by them).
        return gzip.compress(content, 9, mtime=0)
    if extension == ".bz2":
        return bz2.compress(content, 9)
    if extension == ".xz":
        return lzma.compress(content)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr(
            zipfile.ZipInfo(member, date_time=(1980, 1, 1, 0, 0, 0)),
            content,
            compress_type=zipfile.ZIP_DEFLATED,
        )
    return buffer.getvalue()


def csv_wide(columns: int) -> bytes:
    """A header of ``columns`` names and one row."""
    header = ",".join(f"c{i}" for i in range(columns))
    return f"{header}\n{','.join('1' for _ in range(columns))}\n".encode()


def csv_long_line(n_bytes: int) -> bytes:
    """A CSV whose one data line is ``n_bytes`` long (one cell)."""
    return b"note,n\n" + b"x" * n_bytes + b",1\n"


# ---------------------------------------------------------------------------- Stata
def stata_claiming(observations: int, variables: int | None = None, version: int = 118) -> bytes:
    """A small valid .dta whose header claims ``observations`` (and ``variables``)."""
    buffer = io.BytesIO()
    pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]}).to_stata(
        buffer, write_index=False, version=version
    )
    data = bytearray(buffer.getvalue())
    if version >= 117:
        k_at = data.index(b"<K>") + 3
        k_size = 4 if version >= 119 else 2
        n_at = k_at + k_size + len(b"</K><N>")
        n_size = 4 if version == 117 else 8
        if variables is not None:
            data[k_at : k_at + k_size] = variables.to_bytes(k_size, "little")
        data[n_at : n_at + n_size] = observations.to_bytes(n_size, "little")
    else:
        if variables is not None:
            data[4:6] = struct.pack("<H", variables)
        data[6:10] = struct.pack("<I", observations)
    return bytes(data)


# ---------------------------------------------------------------------------- running capped
@dataclass(frozen=True)
class Run:
    """What a capped child did: its exit status, last stderr line, peak memory and times."""

    returncode: int
    stdout: str
    stderr: str
    max_rss_mb: float
    cpu_seconds: float
    wall_seconds: float

    @property
    def last_line(self) -> str:
        lines = self.stderr.strip().splitlines()
        return lines[-1] if lines else ""


def run_limited(
    argv: list[str], memory_mb: int = 2048, cpu_seconds: int = 120, cwd: Path = ROOT
) -> Run:
    """Run ``python argv`` in a fresh child interpreter whose address space and CPU time are
    capped (``RLIMIT_AS``, ``RLIMIT_CPU``): a bomb that escapes its bound is killed
    (MemoryError or SIGXCPU) instead of taking the machine down. Peak memory and CPU time come
    from the child's own resource usage (``os.wait4``), never from a timing assertion."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 1024 * 1024,) * 2)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))

    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(
            [sys.executable, *argv],
            cwd=cwd,
            stdout=out,
            stderr=err,
            preexec_fn=limit,
            env=_CHILD_ENV,
        )
        _, status, usage = os.wait4(child.pid, 0)  # this child's own peak memory and CPU
        wall = time.perf_counter() - start
        return _run_from(out, err, status, usage.ru_maxrss, usage.ru_utime + usage.ru_stime, wall)


#: One BLAS thread in every capped child, as in the test processes.
_CHILD_ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def _run_from(out, err, status: int, max_rss_kb: float, cpu: float, wall: float) -> Run:
    out.seek(0)
    err.seek(0)
    return Run(
        os.waitstatus_to_exitcode(status),
        out.read().decode(errors="replace"),
        err.read().decode(errors="replace"),
        max_rss_kb / 1024,
        cpu,
        wall,
    )


#: The fork server (:func:`run_forked`): reads one JSON request per line on stdin, forks a
#: child that caps itself, points its standard streams at the request's files and runs
#: ``python -m MODULE ARGS`` or ``python -c CODE ARGS`` as the interpreter would (exit status
#: from ``SystemExit``, a traceback and status 1 for anything else); answers with the child's
#: wait status, peak memory and CPU from ``os.wait4``. A forked child's peak counts only the
#: server's pages it touches (Linux does not copy the page tables of file mappings at a
#: fork), so the server adds its own resident size at the fork: an upper bound on what a
#: fresh interpreter that imported the same would hold.
_FORK_SERVER = r"""
import json, os, resource, runpy, sys, traceback

import numpy, pandas, pyarrow, pyarrow.parquet  # what every command that reads a table imports
import deid_core.cli.main  # the command line's entry point; each command imports its own module


def run(argv):
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = ["-c", *argv[2:]]
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})


def child(request):
    status = 1
    try:
        limit = request["memory_mb"] * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        cpu = request["cpu_seconds"]
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        os.chdir(request["cwd"])
        for fd, name in ((1, "out"), (2, "err")):
            os.dup2(os.open(request[name], os.O_WRONLY | os.O_TRUNC), fd)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        try:
            run(request["argv"])
            status = 0
        except SystemExit as stop:
            if stop.code is None:
                status = 0
            elif isinstance(stop.code, int):
                status = stop.code
            else:
                print(stop.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)


def resident_kb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


for line in sys.stdin:
    request = json.loads(line)
    server_kb = resident_kb()
    pid = os.fork()
    if pid == 0:
        child(request)
    _, status, usage = os.wait4(pid, 0)
    answer = [status, usage.ru_maxrss + server_kb, usage.ru_utime + usage.ru_stime]
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
"""

_fork_server: subprocess.Popen | None = None


def run_forked(
    argv: list[str], memory_mb: int = 2048, cpu_seconds: int = 120, cwd: Path = ROOT
) -> Run:
    """:func:`run_limited`, with the child forked from a server that has already imported
    numpy, pandas, pyarrow and the command line's entry point (about 0.5 s of imports saved
    per input). Each child caps itself before it runs; its CPU is its own (without the
    imports), its peak memory its own plus the server's whole resident size (an upper bound:
    a budget checked on it holds for a fresh interpreter too). Anything that asks the
    interpreter itself for more than ``-m`` or ``-c`` (``-X importtime``: what a command
    imports) runs in a fresh interpreter."""
    if argv[0] not in ("-m", "-c"):
        return run_limited(argv, memory_mb, cpu_seconds, cwd)
    global _fork_server
    if _fork_server is None or _fork_server.poll() is not None:
        _fork_server = subprocess.Popen(
            [sys.executable, "-c", _FORK_SERVER],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=_CHILD_ENV,
            text=True,
        )
    start = time.perf_counter()
    with tempfile.NamedTemporaryFile() as out, tempfile.NamedTemporaryFile() as err:
        request = {
            "argv": argv,
            "memory_mb": memory_mb,
            "cpu_seconds": cpu_seconds,
            "cwd": str(cwd),
            "out": out.name,
            "err": err.name,
        }
        _fork_server.stdin.write(json.dumps(request) + "\n")
        _fork_server.stdin.flush()
        answer = _fork_server.stdout.readline()
        if not answer:
            raise RuntimeError("the fork server of the capped runs has ended")
        status, max_rss_kb, cpu = json.loads(answer)
        wall = time.perf_counter() - start
        return _run_from(out, err, status, max_rss_kb, cpu, wall)
