"""Engines: where the queries that grow with the data run.

``memory`` (the default) is the rest of the core: the records in a data frame, counted in
numpy. ``duckdb`` (embedded, out of core) and ``spark`` (a local or remote cluster) run one
query, the finest cross-tabulation of the key columns after the recipe's generalisation steps
(:mod:`deid_core.engines.query`, SQL in DuckDB's dialect transpiled to Spark's by SQLGlot), and
return only its rows, one per distinct combination of key values, with record counts and weight
sums (:class:`CrossTab`); every figure is computed from those rows locally
(:mod:`deid_core.engines.crosstab`).
"""

from deid_core._lazy import lazy_exports

#: Where each name lives; imported on first use (:mod:`deid_core._lazy`).
_EXPORTS = {
    "CrossTab": "crosstab",
    "distribution_from_cells": "crosstab",
    "risk_from_cells": "crosstab",
    "sample_risk_from_cells": "crosstab",
    "uniqueness_from_crosstab": "crosstab",
    "DuckDBEngine": "sql",
    "SparkEngine": "sql",
    "SqlEngine": "sql",
}
__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)

#: The engines by name, with what each is for.
ENGINES = {
    "memory": "in memory (the default): every figure, the model and linkage included",
    "duckdb": "DuckDB, embedded: out of core, for files larger than memory",
    "spark": "Spark SQL, for data that live on a cluster",
}
#: The Spark master when none is given: two local cores.
DEFAULT_SPARK_MASTER = "local[2]"
#: File names that DuckDB reads as CSV (a compressed one is unpacked as it streams).
CSV_SUFFIXES = (".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz")

__all__ = [
    "CSV_SUFFIXES",
    "DEFAULT_SPARK_MASTER",
    "ENGINES",
    "CrossTab",
    "DuckDBEngine",
    "SparkEngine",
    "SqlEngine",
    "distribution_from_cells",
    "risk_from_cells",
    "sample_risk_from_cells",
    "uniqueness_from_crosstab",
]
