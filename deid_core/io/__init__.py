"""Files in and out: reading uploaded tables (:mod:`~deid_core.io.reading`), what their columns
hold (:mod:`~deid_core.io.columns`), which role each column plays (:mod:`~deid_core.io.roles`),
and writing the masked file (:mod:`~deid_core.io.export`)."""
