"""Built-in demonstration data sets, each with the variable roles it is meant to be used with.

``DEMO_DATASETS`` maps a key to a :class:`DemoDataset`; :func:`load_demo` returns a fresh copy of
its table, so callers may change it freely.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import pandas as pd

from deid_core.datasets.areas import area_data
from deid_core.datasets.cohort import synthetic_cohort
from deid_core.datasets.el_emam import el_emam_table
from deid_core.datasets.flchain import load_flchain
from deid_core.datasets.point_source import point_source_data
from deid_core.datasets.roc_example import diagnostic_test_data, matthews_harel_table
from deid_core.datasets.visits import visits_data
from deid_core.errors import DataError
from deid_core.masking import IntervalGroup, KernelSmooth, MaskingStep, RelativeRound
from deid_core.recipe import Roles
from deid_core.utility.spec import SUPPORTED_FAMILIES


@dataclass(frozen=True)
class DemoDataset:
    """A demonstration data set: where it comes from and how its columns are meant to be used.

    ``quasi_identifiers`` may include the exposure (in Cologne's example the dose is both), and
    ``covariates`` may include quasi-identifiers: these lists are what the risk and utility
    computations use. :attr:`default_roles` gives each named column its one primary role.
    """

    key: str
    title: str
    description: str
    source: str
    licence: str
    synthetic: bool
    loader: Callable[[], pd.DataFrame]
    quasi_identifiers: tuple[str, ...]
    exposure: str | None
    outcome: str | None
    covariates: tuple[str, ...]
    record_id: str | None
    default_steps: tuple[MaskingStep, ...] = ()
    """The masking the dashboard starts with on this demo."""
    direct_identifiers: tuple[str, ...] = ()
    """Columns never released (e.g. exact coordinates, which identify people)."""
    locations: tuple[str, ...] = ()
    """Coordinate columns a spatial smoothing step uses (empty: the data are not spatial)."""
    pattern: str | None = None
    """Column holding a known exposure pattern for prior-knowledge ("ring") smoothing kernels."""
    model_family: str = "logistic"
    """The analysis model the demo is meant for: "logistic" (0/1 outcome), "poisson" (counts)
    or "binomial" (the outcome counts events out of :attr:`trials`)."""
    trials: str | None = None
    """Column of the number of trials (persons at risk) for ``model_family="binomial"``."""

    def __post_init__(self) -> None:
        if self.model_family not in SUPPORTED_FAMILIES:
            known = ", ".join(SUPPORTED_FAMILIES)
            raise DataError(f"Demo '{self.key}': model_family must be one of {known}.")
        if (self.model_family == "binomial") != (self.trials is not None):
            raise DataError(
                f"Demo '{self.key}': a trials column goes with model_family 'binomial', "
                "and only with it."
            )

    @property
    def roles(self) -> Roles:
        """The roles the demo is meant to be used with: what the dashboard starts with, and
        what the command line takes for ``demo:KEY`` when no recipe or role flag says
        otherwise."""
        return Roles(
            quasi_identifiers=self.quasi_identifiers,
            exposure=self.exposure,
            outcome=self.outcome,
            covariates=self.covariates,
            record_id=self.record_id,
            direct_identifiers=self.direct_identifiers,
        )

    @property
    def default_roles(self) -> dict[str, str]:
        """Primary role of each named column; columns not listed have the role ``"other"``.

        Precedence: record id, direct identifier, exposure, outcome, quasi-identifier,
        covariate.
        """
        roles: dict[str, str] = {}
        if self.record_id is not None:
            roles[self.record_id] = "record_id"
        for column in self.direct_identifiers:
            roles.setdefault(column, "direct_identifier")
        if self.exposure is not None:
            roles.setdefault(self.exposure, "exposure")
        if self.outcome is not None:
            roles.setdefault(self.outcome, "outcome")
        for column in self.quasi_identifiers:
            roles.setdefault(column, "quasi_identifier")
        for column in self.covariates:
            roles.setdefault(column, "covariate")
        return roles


DEMO_DATASETS: Mapping[str, DemoDataset] = MappingProxyType(
    {
        "cohort": DemoDataset(
            key="cohort",
            title="Synthetic radiation cohort (stomach cancer)",
            description=(
                "16,000 made-up people shaped like the atomic-bomb survivor example of Cologne "
                "et al. (2012): city, sex, precise ages, stomach radiation dose and about 85 "
                "stomach cancers. The cancers were drawn with a true excess relative risk of "
                "0.5 per gray, so you can see how masking the dose moves the estimate."
            ),
            source=(
                "Generated by deid_core.datasets.cohort, modelled on J. Cologne et al., "
                "'Protecting privacy of shared epidemiologic data without compromising analysis "
                "potential' (2012), section 2.4 and Table 2."
            ),
            licence="Synthetic data produced by this project's code; no real persons.",
            synthetic=True,
            loader=synthetic_cohort,
            quasi_identifiers=("city", "sex", "age_at_exposure", "age_at_end", "stomach_dose_gy"),
            exposure="stomach_dose_gy",
            outcome="stomach_cancer",
            covariates=("city", "sex", "age_at_exposure", "age_at_end"),
            record_id="person_id",
            # Cologne's recommendation for the dose (relative rounding) and the five-year age
            # strata of their Figure 2(a).
            default_steps=(
                RelativeRound("stomach_dose_gy", digits=2),
                IntervalGroup("age_at_exposure", width=5.0, release="midpoint"),
                IntervalGroup("age_at_end", width=5.0, release="midpoint"),
            ),
        ),
        "flchain": DemoDataset(
            key="flchain",
            title="Serum free light chain cohort (flchain, real data)",
            description=(
                "7,874 residents of Olmsted County, Minnesota, aged 50 or more, with serum free "
                "light chain levels and death during follow-up. Real, already de-identified data "
                "published with the R survival package."
            ),
            source=(
                "R package survival (T. Therneau), data set flchain; Dispenzieri et al. 2012, "
                "Mayo Clin Proc 87:512-523; Kyle et al. 2006, N Engl J Med 354:1362-1369. "
                "Taken from the copy shipped in scikit-survival 0.28.0."
            ),
            licence=(
                "LGPL (>= 2), the licence of the R survival package that distributes it "
                "(see deid_core/datasets/FLCHAIN_LICENSE.md)."
            ),
            synthetic=False,
            loader=load_flchain,
            quasi_identifiers=("age", "sex", "sample_yr"),
            exposure="kappa",
            outcome="death",
            covariates=("age", "sex"),
            record_id="record_id",
        ),
        "el_emam": DemoDataset(
            key="el_emam",
            title="El Emam & Malin example (27 records)",
            description=(
                "The small hypothetical lab-test table used by El Emam and Malin to explain "
                "equivalence classes and re-identification risk, with sex and year of birth as "
                "quasi-identifiers."
            ),
            source=(
                "K. El Emam and B. Malin, 'Concepts and methods for de-identifying clinical "
                "trial data', paper commissioned by the Institute of Medicine, Table 1."
            ),
            licence=(
                "Hypothetical records reproduced from a published example table; the source "
                "states no licence."
            ),
            synthetic=True,
            loader=el_emam_table,
            quasi_identifiers=("sex", "year_of_birth"),
            exposure=None,
            outcome=None,
            covariates=(),
            record_id="id",
        ),
        "point_source": DemoDataset(
            key="point_source",
            title="Synthetic point-source exposure (case counts at 1,000 locations)",
            description=(
                "1,000 made-up locations scattered over a square, each exposed to a pollutant "
                "from a source at the centre (the exposure falls with the distance from it), "
                "with a count of cases drawn so that the log of the expected count rises by 2 "
                "per unit of exposure. Shaped like the first simulation of Zhou, Dominici and "
                "Louis (2010), for trying spatial smoothing of the exposure and the counts."
            ),
            source=(
                "Generated by deid_core.datasets.point_source, modelled on Y. Zhou, F. Dominici "
                "and T. A. Louis, 'A smoothing approach for masking spatial data' (2010), "
                "section 3, example I (the exact exposure function there is not reproduced)."
            ),
            licence="Synthetic data produced by this project's code; no real persons.",
            synthetic=True,
            loader=point_source_data,
            # Zhou's intruder knows every person's true exposure and wants their outcome.
            quasi_identifiers=("exposure",),
            exposure="exposure",
            outcome="cases",
            covariates=(),
            record_id="id",
            locations=("x", "y"),
            pattern="dist_to_source",
            model_family="poisson",
            # Exact coordinates identify people, and the distance from the source gives the
            # true exposure away: smoothing uses them, the release does not.
            direct_identifiers=("x", "y", "dist_to_source"),
            default_steps=tuple(
                KernelSmooth(column, ("x", "y"), kernel="exponential", bandwidth=0.05)
                for column in ("exposure", "cases")
            ),
        ),
        "areas": DemoDataset(
            key="areas",
            title="Synthetic deaths by area and group (2,000 areas)",
            description=(
                "2,000 made-up areas (clustered around four cities on a 100 km square) with "
                "their population and deaths in one year, split into two population groups. "
                "Group 1 lives more in the cities and in the north-east, where deaths are "
                "more common, so its odds ratio of death (true value exp(0.25) = 1.28) is "
                "only recovered when the model also includes the area's position (x and y). "
                "Shaped like the Medicare analysis of deaths by race across zip codes of Zhou, "
                "Dominici and Louis (2010)."
            ),
            source=(
                "Generated by deid_core.datasets.areas, modelled on Y. Zhou, F. Dominici and "
                "T. A. Louis, 'A smoothing approach for masking spatial data' (2010), section 4."
            ),
            licence="Synthetic data produced by this project's code; no real persons.",
            synthetic=True,
            loader=area_data,
            # Zhou's intruder holds the true (census) population of each group in each area
            # and wants its deaths; area_id and the coordinates name the area outright and
            # are not meant to be released unmasked.
            quasi_identifiers=("group", "population"),
            exposure="group",
            outcome="deaths",
            covariates=("x", "y"),
            record_id="row_id",
            locations=("x", "y"),
            model_family="binomial",
            trials="population",
            # Deaths and population smoothed over nearby areas within each group, so the
            # group indicator stays exact (Zhou's block kernel), 1 km bandwidth.
            default_steps=tuple(
                KernelSmooth(
                    column, ("x", "y"), kernel="exponential", bandwidth=1.0, within="group"
                )
                for column in ("deaths", "population")
            ),
        ),
        "visits": DemoDataset(
            key="visits",
            title="Synthetic hospital visits (several admissions per patient)",
            description=(
                "About 4,400 made-up admissions of 2,000 patients: medical record number, "
                "name, date of birth, admission and discharge dates, 5-digit ZIP code, sex, "
                "ICD-10 diagnosis code, length of stay and readmission (0/1). Every date, the "
                "ZIP code and the diagnosis code are quasi-identifiers, as El Emam and Malin "
                "describe clinical data: try dates relative to each patient's first admission, "
                "the date of birth as an age, and codes cut to their 3-character category."
            ),
            source=(
                "Generated by deid_core.datasets.visits, shaped after the clinical data "
                "described by K. El Emam and B. Malin, 'Concepts and methods for "
                "de-identifying clinical trial data' (2014); the parameters are ours."
            ),
            licence="Synthetic data produced by this project's code; no real persons.",
            synthetic=True,
            loader=visits_data,
            quasi_identifiers=(
                "birth_date",
                "admission_date",
                "discharge_date",
                "zip",
                "sex",
                "icd10",
            ),
            exposure="length_of_stay",
            outcome="readmitted",
            covariates=("sex",),
            record_id="mrn",
            direct_identifiers=("name",),
        ),
        "roc_example": DemoDataset(
            key="roc_example",
            title="Matthews & Harel ROC example (10 records)",
            description=(
                "The ten test scores and disease statuses behind the empirical ROC curve of "
                "Matthews and Harel, with a 'known' flag marking the nine records the intruder "
                "holds: the published curve gives the tenth record's status away and brackets "
                "its score."
            ),
            source=(
                "G. J. Matthews and O. Harel, 'An examination of data confidentiality and "
                "disclosure issues related to publication of empirical ROC curves', Academic "
                "Radiology (2013), Tables 1-2."
            ),
            licence=(
                "Simulated records reproduced from a published example table; the source "
                "states no licence."
            ),
            synthetic=True,
            loader=matthews_harel_table,
            quasi_identifiers=(),
            exposure="score",
            outcome="status",
            covariates=(),
            record_id=None,
        ),
        "diagnostic_test": DemoDataset(
            key="diagnostic_test",
            title="Simulated diagnostic test (200 patients)",
            description=(
                "200 made-up patients with a continuous test score and a disease status "
                "(about 30% diseased; binormal scores), for trying the ROC-curve "
                "reconstruction attack and its mitigations."
            ),
            source=(
                "Generated by deid_core.datasets.roc_example, in the spirit of the simulated "
                "diagnostic test of G. J. Matthews and O. Harel (Academic Radiology, 2013); "
                "the parameters are ours."
            ),
            licence="Synthetic data produced by this project's code; no real persons.",
            synthetic=True,
            loader=diagnostic_test_data,
            quasi_identifiers=(),
            exposure="score",
            outcome="status",
            covariates=(),
            record_id=None,
        ),
    }
)


def load_demo(key: str) -> pd.DataFrame:
    """Return a fresh copy of the table of the demo data set ``key``."""
    if key not in DEMO_DATASETS:
        known = ", ".join(DEMO_DATASETS)
        raise DataError(f"There is no demo data set called '{key}'; choose one of: {known}.")
    return DEMO_DATASETS[key].loader().copy()
