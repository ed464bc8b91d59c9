"""The mapping of a wanted reasoning effort to one a model accepts.

Users pick one level of the scale (`uji.wires.base.EFFORTS`, which the wires read too);
each model accepts a subset. `nearest` picks the
level sent: the wanted one if accepted, else the closest one above it, else the closest
below (reference internals §6). Going up first means a tie goes up too: with only
`low` and `high` accepted, `medium` becomes `high`, so asking for more thought never
quietly gets less when more is available.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from uji.wires.base import RANK, Effort, is_effort


class Model(Protocol):
    """What the scale needs of a catalog model (uji.providers.catalog.Model)."""

    @property
    def reasoning(self) -> bool: ...

    @property
    def efforts(self) -> Sequence[str] | None: ...


DEFAULT_EFFORTS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high")


def ordered(levels: Iterable[str]) -> list[str]:
    """Known levels only, least to most, each once."""
    return sorted({e for e in levels if e in RANK}, key=RANK.__getitem__)


def nearest(wanted: str, accepted: Sequence[str]) -> str | None:
    """The accepted level to send for `wanted`; None when nothing is accepted."""
    levels = ordered(accepted)
    if not levels or wanted not in RANK:
        return None
    if wanted in levels:
        return wanted
    rank = RANK[wanted]
    above = [e for e in levels if RANK[e] > rank]
    return above[0] if above else levels[-1]


def accepted(model: Model | None, default: Sequence[str] = DEFAULT_EFFORTS) -> list[str]:
    """The levels a catalog model accepts, least to most; empty if it does not reason.
    `default`: for a model without a list of its own (the provider's api may say)."""
    if model is None or not model.reasoning:
        return []
    return ordered(model.efforts or default)


def for_request(
    wanted: str | None, model: Model | None, default: Sequence[str] = DEFAULT_EFFORTS
) -> Effort | None:
    """The effort a request carries: the user's level mapped for a known model.

    None means the provider's default. A model missing from the catalog gets the level
    as asked (its wire decides), and a known model that does not reason gets none.
    """
    if wanted is None:
        return None
    sent = wanted if model is None else nearest(wanted, accepted(model, default))
    return sent if is_effort(sent) else None
