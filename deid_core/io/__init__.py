"""Files in and out: reading uploaded tables, what their columns hold, their roles, and the
masked file to send.

:mod:`~deid_core.io.reading` (formats, limits, cleaning; workbooks in
:mod:`~deid_core.io.workbooks`, the bounds and budget of a read in
:mod:`~deid_core.io.read_budget`), :mod:`~deid_core.io.columns` (natural
types, column profiles), :mod:`~deid_core.io.roles` (suggested roles and their checks),
:mod:`~deid_core.io.export` (CSV, Excel, Parquet, Stata).
"""
