"""Where the engines read data from: a Parquet file or a folder of Parquet files (or, for Spark,
a table), the kinds of its columns, and the in-memory reader that applies the same reading rule
as the SQL engines (:mod:`deid_core.engines.query`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from deid_core.engines.query import TRIMMED
from deid_core.errors import DataError
from deid_core.io.columns import MISSING_MARKERS


def parquet_path(spec: str) -> Path | None:
    """The path if ``spec`` names a Parquet file or a folder, else None (another format)."""
    path = Path(spec)
    if path.is_dir() or (path.is_file() and path.suffix.lower() == ".parquet"):
        return path
    return None


def parquet_dataset(path: Path) -> ds.Dataset:
    """The Parquet file, or every Parquet file under the folder, as one dataset."""
    try:
        dataset = ds.dataset(path, format="parquet", exclude_invalid_files=False)
    except (pa.ArrowInvalid, OSError):
        raise DataError(
            "The data could not be read as Parquet; the file (or a file in the folder) may be "
            "damaged or not really Parquet."
        ) from None
    if not dataset.files:
        raise DataError("The folder holds no Parquet files.")
    return dataset


def arrow_kind(data_type: pa.DataType) -> str:
    """The engines' kind of an Arrow column type (see ``query.KINDS``)."""
    if pa.types.is_dictionary(data_type):
        data_type = data_type.value_type
    if pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        return "text"
    if pa.types.is_boolean(data_type):
        return "boolean"
    if pa.types.is_integer(data_type):
        return "integer"
    if pa.types.is_floating(data_type) or pa.types.is_decimal(data_type):
        return "float"
    if pa.types.is_date(data_type):
        return "date"
    if pa.types.is_timestamp(data_type):
        return "timestamp"
    return "other"


def column_kinds(schema: pa.Schema) -> dict[str, str]:
    """Each column's kind, by name; repeated names are refused."""
    names = schema.names
    if len(set(names)) != len(names):
        raise DataError("The data have repeated column names; give each column its own name.")
    return {field.name: arrow_kind(field.type) for field in schema}


def check_columns(kinds: dict[str, str], needed: Sequence[str]) -> None:
    """A DataError naming the columns the data lack, or whose kind the engines cannot read."""
    absent = [c for c in needed if c not in kinds]
    if absent:
        raise DataError(f"The data have no column(s) {', '.join(map(repr, absent))}.")
    unreadable = [c for c in needed if kinds[c] == "other"]
    if unreadable:
        raise DataError(
            f"Column(s) {', '.join(map(repr, unreadable))} hold values of a kind the engines do "
            "not read (lists, records, binary...)."
        )


def _read_rule(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """The engines' reading rule: text trimmed and missing markers missing, NaN and infinite
    numbers missing, true/false as 1/0, dictionary-encoded text as text."""
    data_type = column.type
    if pa.types.is_dictionary(data_type):
        column = column.cast(data_type.value_type)
        data_type = column.type
    if pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        trimmed = pc.utf8_trim(column, TRIMMED)
        marker = pc.is_in(trimmed, value_set=pa.array(MISSING_MARKERS, type=trimmed.type))
        return pc.if_else(marker, pa.scalar(None, type=trimmed.type), trimmed)
    if pa.types.is_floating(data_type) or pa.types.is_decimal(data_type):
        numbers = column.cast(pa.float64())
        finite = pc.is_finite(numbers)
        return pc.if_else(finite, numbers, pa.scalar(None, type=pa.float64()))
    if pa.types.is_boolean(data_type):
        return column.cast(pa.int64())
    return column


def read_parquet_frame(path: Path, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """The Parquet file or folder as a data frame, read by the SQL engines' rule (text trimmed
    of spaces, tabs and line breaks, the missing markers ``NA``, ``.``, empty... missing;
    NaN and infinite numbers missing), so that the in-memory engine assesses the very values
    DuckDB and Spark read. Column types are kept as stored (no type is guessed from text)."""
    dataset = parquet_dataset(path)
    kinds = column_kinds(dataset.schema)
    wanted = list(kinds) if columns is None else list(dict.fromkeys(columns))
    check_columns(kinds, wanted)
    try:
        table = dataset.to_table(columns=wanted)
    except (pa.ArrowInvalid, OSError):
        raise DataError("The Parquet data could not be read; a file may be damaged.") from None
    if table.num_rows == 0:
        raise DataError("The data have no rows.")
    ruled = pa.table({name: _read_rule(table[name]) for name in wanted})
    frame = ruled.to_pandas(date_as_object=False, types_mapper=_text_as_str)
    for name in frame.columns:
        if kinds[name] == "float":
            frame[name] = frame[name].astype(np.float64)
    return frame


def _text_as_str(data_type: pa.DataType) -> pd.api.extensions.ExtensionDtype | None:
    """pandas' own text type for Arrow text (so that text stays in Arrow, missing as NaN)."""
    if pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        return pd.StringDtype(storage="pyarrow", na_value=np.nan)
    return None
