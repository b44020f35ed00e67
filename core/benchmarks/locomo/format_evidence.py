"""LoCoMo evidence ids: ``dia_id`` normalisation, and evidence lists resolved to turn refs with
every id that is not taken verbatim reported."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_DIA_ID = re.compile(r"D:?(\d+):(\d+)")


def canonical_dia_id(token: str) -> str | None:
    """``D30:05`` -> ``D30:5``, ``D:11:26`` -> ``D11:26``; None when the token is no dia_id at all.

    The released locomo10.json spells a few evidence ids this way; the turns' own ids are clean.
    LoCoMo's evaluation never reads evidence, so normalising changes no official score."""
    m = _DIA_ID.fullmatch(token)
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


@dataclass
class EvidenceReport:
    """Evidence ids that were not taken verbatim: never dropped or rewritten silently."""

    normalised: list[str] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    def notes(self, where: str, what: str) -> list[str]:
        out = []
        for label, items in (
            ("normalised", self.normalised),
            ("dropped malformed", self.malformed),
            ("dropped unknown (no such turn)", self.unknown),
        ):
            if items:
                shown = ", ".join(items[:8]) + (" …" if len(items) > 8 else "")
                out.append(f"{where}: {label} {len(items)} {what} evidence id(s) ({shown})")
        return out


def resolve_evidence(ids: object, refs: dict[str, str], where: str, report: EvidenceReport) -> list[str]:
    """dia_ids -> turn refs. Tolerates "D1:3; D2:4" strings and the release's spelling slips
    (``D30:05``, ``D:11:26``) through :func:`canonical_dia_id`; every id that is normalised,
    malformed or names no turn is recorded in ``report`` (and so in the import notes)."""
    items = [ids] if isinstance(ids, str) else ids if isinstance(ids, list) else []
    out = []
    for item in items:
        for token in re.split(r"[;,\s]+", item) if isinstance(item, str) else [repr(item)]:
            if not token:
                continue
            canonical = canonical_dia_id(token)
            if canonical is None:
                report.malformed.append(f"{where}: {token}")
            elif canonical not in refs:
                report.unknown.append(f"{where}: {token}")
            else:
                if canonical != token:
                    report.normalised.append(f"{where}: {token} -> {canonical}")
                out.append(refs[canonical])
    return list(dict.fromkeys(out))
