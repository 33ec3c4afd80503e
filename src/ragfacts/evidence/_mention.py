"""A checkable fact found in a text: a number, date, percentage, quantity, amount of money or name."""

from __future__ import annotations

from dataclasses import dataclass

Date = tuple[int | None, int | None, int | None]  # year, month, day; None where the text does not say


@dataclass(frozen=True)
class Mention:
    """A checkable fact in a text: its kind, span, normalised value and what it is compared by."""

    kind: str  # number, date, percent, quantity, money, entity
    start: int
    end: int
    text: str
    value: str  # the normalised form shown to users: 1898, 1898-03-05, 20%, 5000 m, 5000000 USD, paris
    amount: float | None = None  # in base units (metres, grams, ...); None for dates and names
    precision: float = 0.0  # the unit the amount is written to: 3.5 million -> 100,000
    family: str = ""  # number: cardinal|ordinal|time; quantity: its dimension; entity: latin|cjk
    currencies: frozenset[str] = frozenset()
    date: Date | None = None
    decade: bool = False
    components: tuple[float, ...] = ()  # every number it states, for bare numbers of the other text
    hedged: bool = False  # "about", "约", "多": read as +-10%
    weak: bool = False  # a small word number or an ordinal: reported only against a differing reference value
    words: tuple[str, ...] = ()  # a name: the words that must all occur in the reference
    loose: bool = False  # read only leniently (a reference's "一"): supports, but is shown as no candidate
