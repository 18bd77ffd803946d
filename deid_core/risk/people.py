"""Several rows per person: equivalence-class sizes counted in people, not rows.

When the record id repeats (visits, events, admissions), the file has several rows per person
and a class of rows can hold several rows of one person: two visits of a man in his forties
make a class of two rows but of one person, and that person is unique. El Emam & Malin count
records because their records are people; with several rows per person we count people:

- a row's class is the rows that share its masked quasi-identifier values (as in
  :mod:`deid_core.risk.classes`); its size in people, ``f_r``, is the number of distinct
  people (record ids) with a row in it;
- a person's class size is the smallest ``f_r`` over their rows: an intruder who knows the
  quasi-identifier values of any one of a person's rows (one visit, one admission) narrows the
  person down to that row's people, so **a person is at risk by their riskiest row**
  (risk ``1 / min_r f_r``);
- k, uniques, records in small classes and the risks then run over people (the average risk is
  the mean over people of ``1/f``, no longer classes / N).

An intruder who knows several of a person's rows can intersect their classes and do better;
this measure does not model that (it is the one-row intruder of the seeds, per person). A row
with a missing record id counts as a person of its own. Missing quasi-identifier values count
as a category of their own here; the wildcard rule is not counted in people.

Speed: one factorization of the class key, one hash of (class, person) pairs to count each
pair once, and one ``minimum.at`` per person: O(n) on the rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class People:
    """Which person each row belongs to: codes 0..n_people-1, one per row."""

    codes: np.ndarray
    n_people: int

    @property
    def n_rows(self) -> int:
        return int(self.codes.size)

    @property
    def repeats(self) -> bool:
        """Whether some person has several rows."""
        return self.n_people < self.n_rows


def people_of(record_id: pd.Series) -> People:
    """The person of each row from the record id (a missing id: a person of its own)."""
    codes, uniques = pd.factorize(record_id, use_na_sentinel=True)
    codes = codes.astype(np.int64)
    missing = codes < 0
    n_people = len(uniques)
    if missing.any():
        extra = int(missing.sum())
        codes[missing] = n_people + np.arange(extra)
        n_people += extra
    return People(codes, n_people)


@dataclass(frozen=True)
class PeopleClassSizes:
    """Class sizes in people: per person (the smallest over their rows), per row (the number
    of people in the row's class) and the number of classes."""

    per_person: np.ndarray
    per_row: np.ndarray
    n_classes: int


def people_class_sizes(key: np.ndarray, people: People) -> PeopleClassSizes:
    """Class sizes counted in distinct people for a class key (one integer per row, equal for
    rows of the same class: :func:`deid_core.risk.classes.combine_codes`)."""
    if key.size != people.n_rows:
        raise ValueError("The class key and the people have different numbers of rows.")
    if key.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return PeopleClassSizes(empty, empty, 0)
    classes, uniques = pd.factorize(key)
    classes = classes.astype(np.int64)
    n_classes = len(uniques)
    pairs = pd.unique(classes * people.n_people + people.codes)  # each (class, person) once
    per_class = np.bincount(pairs // people.n_people, minlength=n_classes)
    per_row = per_class[classes]
    per_person = np.full(people.n_people, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(per_person, people.codes, per_row)
    return PeopleClassSizes(per_person, per_row, n_classes)
