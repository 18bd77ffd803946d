"""The SQL engines: DuckDB (embedded, out of core) and Spark (a local or remote cluster). Both
run the one query of :mod:`deid_core.engines.query` and hand back its rows as a
:class:`~deid_core.engines.crosstab.CrossTab`; only those aggregates leave the engine."""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from sqlglot import exp

from deid_core.engines import CSV_SUFFIXES, DEFAULT_SPARK_MASTER
from deid_core.engines.crosstab import CrossTab
from deid_core.engines.query import (
    WEIGHT_INVALID,
    WEIGHT_MISSING,
    crosstab_query,
    render,
)
from deid_core.engines.sources import check_columns, column_kinds, parquet_dataset
from deid_core.errors import DataError, DeidError, RecipeError
from deid_core.masking import MaskingStep

SOURCE = "deid_source"
_VIEWS = itertools.count()
#: DuckDB's memory for one query; beyond it DuckDB spills to a temporary folder.
DUCKDB_MEMORY_LIMIT = "2GB"
SPARK_MISSING = (
    "The Spark engine needs pyspark and Java: pip install -r requirements-spark.txt, and a "
    "Java 17+ runtime (Debian: apt-get install default-jre-headless)."
)
JAVA_MISSING = (
    "The Spark engine needs a Java 17+ runtime: apt-get install default-jre-headless (Debian), "
    "or set JAVA_HOME."
)


class SqlEngine(ABC):
    """An engine that runs the cross-tabulation query where the data are."""

    name: str
    dialect: str
    source: str = SOURCE  # the relation the query reads

    @abstractmethod
    def kinds(self) -> dict[str, str]:
        """Each column of the source and its kind (``query.KINDS``)."""

    @abstractmethod
    def _run(self, sql: str) -> pa.Table:
        """The rows of the query (in the engine's dialect) as an Arrow table."""

    def close(self) -> None:  # noqa: B027 - engines without resources need nothing
        """Release what the engine holds (temporary folders, connections)."""

    def __enter__(self) -> SqlEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def crosstab(
        self,
        keys: Sequence[str],
        steps: Mapping[str, Sequence[MaskingStep]] | None = None,
        weight: str | None = None,
    ) -> CrossTab:
        """The finest cross-tabulation of ``keys`` after their masking ``steps``, with the
        records and (given a ``weight`` column) the weight sums of each cell."""
        kinds = self.kinds()
        check_columns(kinds, [*keys, *([weight] if weight else [])])
        query = crosstab_query(keys, steps or {}, weight)
        table = self._run(render(query.sql(kinds, self.source), self.dialect))
        for key, column in zip(keys, query.unreadable_columns(), strict=True):
            unreadable = int(pa.compute.sum(table[column]).as_py() or 0)
            if unreadable:
                raise RecipeError(
                    f"The masking of '{key}' cannot read {unreadable} of its values (text "
                    "that is not a number or an ISO date, or numbers too large or too small for "
                    "the SQL engines' exact decimal arithmetic: beyond about 4.5e15 rounding "
                    "bases or interval widths, or beyond 1e23 or below 1e-20 for relative "
                    "rounding); run this recipe with --engine memory."
                )
        if weight is not None:
            if int(pa.compute.sum(table[WEIGHT_MISSING]).as_py() or 0):
                raise DataError(f"The weight column '{weight}' has missing values.")
            if int(pa.compute.sum(table[WEIGHT_INVALID]).as_py() or 0):
                raise DataError(f"The weight column '{weight}' must be positive and finite.")
        return CrossTab.from_arrow(table, keys, weight is not None)


class DuckDBEngine(SqlEngine):
    """DuckDB, embedded: reads the Parquet files, or a CSV file (a file whose name ends in
    one of ``CSV_SUFFIXES``; header row, delimiter and column types detected by DuckDB's
    ``read_csv``), in streaming fashion and spills its hash tables to a temporary folder
    (removed on :meth:`close`) beyond ``memory_limit``."""

    name = "duckdb"
    dialect = "duckdb"

    def __init__(
        self,
        path: Path,
        memory_limit: str = DUCKDB_MEMORY_LIMIT,
        threads: int | None = None,
    ) -> None:
        import duckdb

        csv = path.is_file() and path.name.lower().endswith(CSV_SUFFIXES)
        dataset = None if csv else parquet_dataset(path)
        self._spill = tempfile.mkdtemp(prefix="deid-duckdb-")
        self._connection = duckdb.connect()
        for setting, value in (
            ("memory_limit", memory_limit),
            ("temp_directory", self._spill),
            ("threads", threads or os.cpu_count() or 1),
            ("preserve_insertion_order", False),
            ("TimeZone", "UTC"),
            # Parquet's min/max statistics leave NaN out; DuckDB would trust them and fold
            # tests for NaN away (a NaN read as a number, not as missing). The partial
            # aggregate pushdown spends minutes planning the crosstab query of three or more
            # masked keys, whatever the data's size (EXPLAIN of a 5-key recipe on 20 records:
            # 94 s; without it 0.2 s); the query's one GROUP BY gains nothing from it.
            ("disabled_optimizers", "statistics_propagation,partial_aggregate_pushdown"),
        ):
            self._connection.execute(f"SET {setting} = ?", [value])
        if dataset is None:
            name = exp.Literal.string(str(path)).sql("duckdb")
            try:
                self._connection.execute(
                    f"CREATE VIEW {SOURCE} AS SELECT * FROM read_csv({name}, header = true)"
                )
                empty = self._connection.sql(f"SELECT * FROM {SOURCE} LIMIT 0")
                schema = empty.to_arrow_table().schema
            except duckdb.Error as error:
                self.close()
                first = str(error).strip().splitlines()[0] if str(error).strip() else ""
                raise DataError(f"DuckDB could not read {path.name} as CSV: {first}") from None
            self._kinds = column_kinds(schema)
            return
        self._kinds = column_kinds(dataset.schema)
        files = ", ".join(exp.Literal.string(f).sql("duckdb") for f in dataset.files)
        self._connection.execute(f"CREATE VIEW {SOURCE} AS SELECT * FROM read_parquet([{files}])")

    def kinds(self) -> dict[str, str]:
        return dict(self._kinds)

    def _run(self, sql: str) -> pa.Table:
        return self._connection.sql(sql).to_arrow_table()

    def close(self) -> None:
        self._connection.close()
        shutil.rmtree(self._spill, ignore_errors=True)


def _spark_kind(data_type: Any) -> str:
    """The engines' kind of a Spark column type."""
    from pyspark.sql import types

    if isinstance(data_type, (types.StringType, types.VarcharType, types.CharType)):
        return "text"
    if isinstance(data_type, types.BooleanType):
        return "boolean"
    if isinstance(data_type, (types.ByteType, types.ShortType, types.IntegerType,
                              types.LongType)):  # fmt: skip
        return "integer"
    if isinstance(data_type, (types.FloatType, types.DoubleType, types.DecimalType)):
        return "float"
    if isinstance(data_type, types.DateType):
        return "date"
    if isinstance(data_type, (types.TimestampType, types.TimestampNTZType)):
        return "timestamp"
    return "other"


def spark_session(master: str = DEFAULT_SPARK_MASTER) -> Any:
    """The process's Spark session on ``master`` (started once; a one-line DeidError saying
    what to install when pyspark or Java is missing)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise DeidError(SPARK_MISSING) from None
    java_home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (java_home and Path(java_home, "bin", "java").exists()):
        raise DeidError(JAVA_MISSING)
    scratch = tempfile.gettempdir()
    builder = (
        SparkSession.builder.master(master)
        .appName("deid-engines")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.warehouse.dir", os.path.join(scratch, "deid-spark-warehouse"))
        .config("spark.local.dir", os.path.join(scratch, "deid-spark-local"))
        .config("spark.driver.memory", os.environ.get("DEID_SPARK_DRIVER_MEMORY", "2g"))
    )
    try:
        session = builder.getOrCreate()
    except Exception as error:  # the JVM's own message may be long: keep its first line
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise DeidError(f"Spark could not start on master '{master}': {first[:200]}") from None
    session.sparkContext.setLogLevel("ERROR")
    return session


class SparkEngine(SqlEngine):
    """Spark SQL on ``master`` (default ``local[2]``: two local cores), over a Parquet file or
    folder or an existing table."""

    name = "spark"
    dialect = "spark"

    def __init__(
        self,
        path: Path | None = None,
        table: str | None = None,
        master: str = DEFAULT_SPARK_MASTER,
    ) -> None:
        if (path is None) == (table is None):
            raise DataError("Give the Spark engine a Parquet file or folder, or a table name.")
        self._session = spark_session(master)
        try:
            if path is not None:
                frame = self._session.read.parquet(*parquet_dataset(path).files)
            else:
                frame = self._session.table(table)
        except DeidError:
            raise
        except Exception:
            raise DataError(
                "Spark could not read the data: check the path or the table name."
            ) from None
        names = [field.name for field in frame.schema.fields]
        if len(set(names)) != len(names):
            raise DataError("The data have repeated column names; give each column its own name.")
        self._kinds = {f.name: _spark_kind(f.dataType) for f in frame.schema.fields}
        self.source = f"{SOURCE}_{next(_VIEWS)}"  # one temporary view per engine
        frame.createOrReplaceTempView(self.source)

    def kinds(self) -> dict[str, str]:
        return dict(self._kinds)

    def _run(self, sql: str) -> pa.Table:
        return self._session.sql(sql).toArrow()

    def close(self) -> None:
        self._session.catalog.dropTempView(self.source)
