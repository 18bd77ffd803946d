"""sdcMicro's reference data sets, read from ``../shared/reference-data/sdcmicro`` beside the
project (imported as ``sdcmicro_data``); a test that needs one is skipped when it is absent."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

FOLDER = Path(__file__).resolve().parents[3] / "shared" / "reference-data" / "sdcmicro"


def sdcmicro_data(name: str) -> pd.DataFrame:
    """The reference file ``name`` (e.g. "free1.csv"), or a skip saying where it was looked for."""
    path = FOLDER / name
    if not path.is_file():
        pytest.skip(f"sdcMicro's reference data are not here ({path})")
    return pd.read_csv(path)
