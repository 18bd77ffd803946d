"""The verdict of a release: one function that every page, the report and the command line
call, so that they all judge the same figure of the same file in the same context.

:func:`release_verdict` takes the release settings (:class:`deid_core.share.ReleaseSettings`:
public, shared under agreement or internal; the minimum cell size; whether an intruder may hold
the source; whether HIPAA Safe Harbor is asked for), judges the release's
:class:`deid_core.risk.release.JudgedRelease` in that context and, when Safe Harbor is asked
for, adds its unmet items (:func:`deid_core.io.safe_harbor.unmet_items`), each of which fails
the verdict whatever the risk.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from deid_core.io.safe_harbor import screen_safe_harbor, unmet_items
from deid_core.recipe import Recipe
from deid_core.risk.context import Verdict
from deid_core.risk.release import JudgedRelease
from deid_core.share import ReleaseSettings
from deid_core.workspace import Workspace


@dataclass(frozen=True)
class ReleaseVerdict:
    """The judged release and its verdict."""

    judged: JudgedRelease
    verdict: Verdict

    def to_dict(self) -> dict[str, object]:
        return {**self.verdict.to_dict(), "basis": self.judged.basis, "reason": self.judged.reason}


def release_verdict(
    workspace: Workspace,
    recipe: Recipe,
    settings: ReleaseSettings,
    source: pd.DataFrame | None = None,
    keep_record_id: bool = False,
    judged: JudgedRelease | None = None,
) -> ReleaseVerdict:
    """The verdict of ``recipe``'s release on ``workspace``'s data under ``settings``
    (``judged``: the judged release when it is already computed with these settings)."""
    context = settings.context()
    if judged is None:
        judged = workspace.judged_risk(
            recipe,
            settings.missing,
            source,
            public=context.public,
            holds_source=context.intruder_holds_source,
            bf_method=settings.bf_method,
        )
    verdict = context.judge(judged)
    if settings.safe_harbor:
        screen = screen_safe_harbor(workspace.original, recipe.roles.record_id)
        verdict = verdict.with_safe_harbor(unmet_items(screen, recipe, keep_record_id))
    return ReleaseVerdict(judged, verdict)
