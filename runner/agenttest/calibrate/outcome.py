"""What `agenttest calibrate` found: each labelled line's outcome, the judge's agreement with the labels, the bars
it must clear, and the two ways it is told — the table printed and the JSON written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import EXIT_FAILED, EXIT_OK, UsageError
from ..hints import plural
from ..report.escape import one_line
from ..statistics import CONFIDENCE, Agreement, Proportion, kappa_strength
from ..usage import Usage, usage_line
from .labels import Invalid, Labelled

KAPPA = "Cohen's κ"


@dataclass
class Judged:
    """What the judge said of one line: its verdict (the majority of its samples), or why there is none."""

    line: Labelled
    verdict: bool | None = None
    reason: str = ""
    votes: dict[str, int] | None = None      # with --samples above 1
    error: str | None = None                 # the judge failed (unreachable, unreadable, too slow)
    skipped: str | None = None               # never asked: the budget was spent

    @property
    def split(self) -> bool:
        """Its samples disagreed: the judge contradicted itself on this line."""
        return bool(self.votes and self.votes["passed"] and self.votes["failed"])

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"line": self.line.line, "id": self.line.id, "label": self.line.label}
        if self.verdict is not None:
            out.update(verdict=self.verdict, agreed=self.verdict == self.line.label, reason=self.reason)
        if self.votes is not None:
            out["votes"] = self.votes
        if self.error is not None:
            out["error"] = self.error
        if self.skipped is not None:
            out["skipped"] = self.skipped
        return out


@dataclass
class Bars:
    """`--min-kappa` and `--min-accuracy`: below either, the judge is not to be trusted (exit 1)."""

    min_kappa: float | None = None
    min_accuracy: float | None = None

    def __post_init__(self) -> None:
        if self.min_kappa is not None and not -1 <= self.min_kappa <= 1:
            raise UsageError(f"--min-kappa: Cohen's κ lies from -1 to 1, got {self.min_kappa:g}")
        if self.min_accuracy is not None and not 0 <= self.min_accuracy <= 1:
            raise UsageError(f"--min-accuracy: a fraction from 0 to 1 (0.9 for 90 %), got {self.min_accuracy:g}")


@dataclass
class Calibration:
    """The judge's agreement with the labels, and every line's outcome."""

    judge: str
    labels: str
    samples: int
    bars: Bars
    judged: list[Judged]
    invalid: list[Invalid]
    usage: Usage = field(default_factory=Usage)

    @property
    def agreement(self) -> Agreement:
        return Agreement.of((j.line.label, j.verdict) for j in self.judged if j.verdict is not None)

    @property
    def contradictions(self) -> Proportion:
        """The lines whose samples disagreed, of the lines the judge decided."""
        decided = [j for j in self.judged if j.verdict is not None]
        return Proportion(sum(j.split for j in decided), len(decided))

    @property
    def errors(self) -> list[Judged]:
        return [j for j in self.judged if j.error is not None]

    @property
    def skipped(self) -> list[Judged]:
        return [j for j in self.judged if j.skipped is not None]

    def shortfalls(self) -> list[str]:
        """Why the judge falls below the bars (empty when it clears them, or none was set). A figure that is
        undefined (no line judged; κ of labels and verdicts all of one kind) reaches no bar."""
        agreement = self.agreement
        found = []
        for name, value, flag, bar in ((KAPPA, agreement.kappa, "--min-kappa", self.bars.min_kappa),
                                       ("the accuracy", agreement.accuracy.rate, "--min-accuracy",
                                        self.bars.min_accuracy)):
            if bar is not None and value is None:
                found.append(f"{name} is undefined ({_why_undefined(agreement)}), so it cannot reach {flag} {bar:g}")
            elif bar is not None and value is not None and value < bar:
                found.append(f"{name} {value:.2f} is below {flag} {bar:g}")
        return found

    @property
    def exit_code(self) -> int:
        """1 when the judge falls below a bar, or the measurement has holes (a line invalid, unjudged or not
        asked): a gate must not go green on part of its labels."""
        holes = self.invalid or self.errors or self.skipped
        return EXIT_FAILED if holes or self.shortfalls() else EXIT_OK

    def to_dict(self) -> dict[str, Any]:
        agreement = self.agreement
        out: dict[str, Any] = {
            "judge": self.judge, "labels": self.labels, "samples": self.samples, "confidence": CONFIDENCE,
            "lines": len(self.judged) + len(self.invalid), "judged": agreement.total,
            "judge_errors": len(self.errors), "skipped": len(self.skipped), "invalid": len(self.invalid),
            "accuracy": _figure(agreement.accuracy), "true_positive_rate": _figure(agreement.true_positive_rate),
            "true_negative_rate": _figure(agreement.true_negative_rate),
            "kappa": None if agreement.kappa is None else round(agreement.kappa, 4),
            "majority_baseline": {"label": agreement.majority_label, **_figure(agreement.majority_baseline)},
            "confusion": {"true_positives": agreement.true_positives, "false_negatives": agreement.false_negatives,
                          "false_positives": agreement.false_positives, "true_negatives": agreement.true_negatives},
        }
        if self.samples > 1:
            out["self_contradiction"] = _figure(self.contradictions)
        out |= {"bars": {"min_kappa": self.bars.min_kappa, "min_accuracy": self.bars.min_accuracy},
                "shortfalls": self.shortfalls(), "passed": self.exit_code == EXIT_OK,
                "results": [j.to_dict() for j in self.judged],
                "invalid_lines": [{"line": i.line, "message": i.message} for i in self.invalid],
                "usage": self.usage.to_dict()}
        return out


def table(calibration: Calibration) -> list[str]:
    """What `calibrate` prints: every line where the judge disagreed with its label, contradicted itself or failed,
    then the figures, then the verdict on the bars."""
    out = [line for judged in calibration.judged if (line := _line_note(judged, calibration.labels))]
    agreement = calibration.agreement
    each = f", {plural(calibration.samples, 'sample')} a line" if calibration.samples > 1 else ""
    out += [*([""] if out else []),
            f"Judge {calibration.judge!r} against {calibration.labels}: {plural(agreement.total, 'line')} judged{each}",
            "", f"  {'':<20}{'value':>6}  {f'{CONFIDENCE:.0%} interval'}"]
    rows = [("accuracy", agreement.accuracy, "agree with their label"),
            ("true-positive rate", agreement.true_positive_rate, "labelled pass, judged pass"),
            ("true-negative rate", agreement.true_negative_rate, "labelled fail, judged fail")]
    if calibration.samples > 1:
        rows.append(("self-contradiction", calibration.contradictions, "lines whose samples disagree"))
    out += [f"  {name:<20}{_rate(figure.rate):>6}  {_interval(figure):<14}  {figure.successes} of {figure.trials} "
            f"{note}" for name, figure, note in rows]
    kappa = agreement.kappa
    out.append(f"  {KAPPA:<20}{_rate(kappa):>6}  {'':<14}  {_kappa_words(agreement)}")
    baseline = agreement.majority_baseline
    out.append(f"  {'majority baseline':<20}{_rate(baseline.rate):>6}  {'':<14}  always "
               f"{_word(agreement.majority_label)}: {baseline.successes} of {baseline.trials}")
    holes = [plural(count, *words) for count, words in (
        (len(calibration.errors), ("judge error",)), (len(calibration.skipped), ("line not asked", "lines not asked")),
        (len(calibration.invalid), ("invalid line",))) if count]
    if holes:
        out.append(f"  not counted above: {', '.join(holes)}")
    if calibration.usage.roles:
        out.append(f"  {usage_line(calibration.usage.to_dict())}")
    shortfalls = calibration.shortfalls()
    verdicts = [f"✗ {shortfall}" for shortfall in shortfalls]
    if holes:
        verdicts.append("✗ not every line was judged: the figures are of the others")
    elif not shortfalls and (calibration.bars.min_kappa is not None or calibration.bars.min_accuracy is not None):
        verdicts.append("✓ the judge clears the bars")
    return [*out, "", *verdicts] if verdicts else out


def _line_note(judged: Judged, labels: str) -> str | None:
    """The line printed for a labelled line worth a look (None for one judged as labelled, without a split)."""
    place = f"{labels}:{judged.line.line} {one_line(judged.line.id, 60)}"
    if judged.error is not None:
        return f"! {place}: judge error: {one_line(judged.error, 200)}"
    if judged.skipped is not None:
        return f"○ {place}: {one_line(judged.skipped, 200)}"
    if judged.verdict != judged.line.label:
        return (f"✗ {place}: labelled {_word(judged.line.label)}, judged {_word(judged.verdict)}{_votes(judged)}"
                f" — {one_line(judged.reason, 160)}")
    if judged.split:
        return f"~ {place}: judged {_word(judged.verdict)} as labelled, but{_votes(judged)}"
    return None


def _figure(proportion: Proportion) -> dict[str, Any]:
    low, high = proportion.interval()
    rate = proportion.rate
    return {"value": None if rate is None else round(rate, 4), "interval": [round(low, 4), round(high, 4)],
            "count": proportion.successes, "of": proportion.trials}


def _rate(rate: float | None) -> str:
    return "—" if rate is None else f"{rate:.2f}"


def _interval(proportion: Proportion) -> str:
    if not proportion.trials:
        return ""
    low, high = proportion.interval()
    return f"[{low:.2f}, {high:.2f}]"


def _word(verdict: bool | None) -> str:
    return "pass" if verdict else "fail"


def _votes(judged: Judged) -> str:
    votes = judged.votes
    return f" ({votes['passed']} of {votes['passed'] + votes['failed']} samples passed)" if votes else ""


def _kappa_words(agreement: Agreement) -> str:
    kappa = agreement.kappa
    if kappa is None:
        return f"undefined: {_why_undefined(agreement)}"
    strength = kappa_strength(kappa)
    return f"{'no' if strength == 'none' else strength} agreement beyond chance"


def _why_undefined(agreement: Agreement) -> str:
    if not agreement.total:
        return "no line was judged"
    return f"every label and every verdict is {_word(agreement.majority_label)}: label lines of both kinds"
