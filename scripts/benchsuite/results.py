"""The table of results, and the paired statistics that decide a row."""

import math
import statistics
from dataclasses import dataclass, field


# MARK: - Results

@dataclass
class Row:
    scenario: str
    figure: str
    limit: str
    ratio: str
    target: str
    passed: bool


@dataclass
class Results:
    rows: list = field(default_factory=list)
    details: list = field(default_factory=list)

    def add(self, scenario, figure, limit, ratio, target, passed):
        self.rows.append(Row(scenario, figure, limit, ratio, target, passed))
        print(f"  -> {figure} vs {limit}: {ratio} (target {target}) {'pass' if passed else 'FAIL'}", flush=True)

    def note(self, line):
        self.details.append(line)
        print(f"  {line}", flush=True)

    def markdown(self, header):
        lines = header + [
            "| scenario | figure | limit (same run) | ratio | target | result |",
            "| --- | ---: | ---: | ---: | --- | --- |",
        ]
        for row in self.rows:
            lines.append(f"| {row.scenario} | {row.figure} | {row.limit} | {row.ratio} | {row.target} | "
                         f"{'pass' if row.passed else '**FAIL**'} |")
        lines += ["", "Details:", ""] + [f"- {line}" for line in self.details]
        return "\n".join(lines) + "\n"


def mb(kilobytes):
    return kilobytes / 1024


def median_ratio(numerators, denominators):
    """The median of the ratios of measurements taken in pairs, round by
    round: the figure of every paired comparison. A slow spell of the
    machine that falls on one side of one pair moves that pair's ratio
    alone, where it would move a ratio of means by its whole size. The
    figures shown beside it are the means; `paired_verdict` judges it
    against a target."""
    return statistics.median(pair_ratios(numerators, denominators))


def pair_ratios(numerators, denominators):
    return [n / d for n, d in zip(numerators, denominators) if d > 0]


PAIRED_CONFIDENCE = 0.05  # how unlikely a healthy run's verdict of "missed" may be


@dataclass
class PairedVerdict:
    """A paired comparison judged against a ratio it must reach: the median
    of the per-pair ratios, and whether the pairs show that it missed.

    A single pair moves by tens of per cent on a shared machine, so a median
    of eight pairs often lands below a target a few per cent under the true
    ratio (two servers on the same engine, against 0.95). A miss is declared
    only when the median is under the target and so many pairs fall under it
    that a true ratio at the target would give that many at most once in
    twenty runs (a one-sided sign test); with fewer than five pairs no count
    is that unlikely, and the median alone judges."""
    ratio: float
    below: int
    pairs: int
    target: float

    @property
    def missed(self):
        if self.ratio >= self.target:
            return False
        if self.pairs < 5:
            return True
        chance = sum(math.comb(self.pairs, k) for k in range(self.below, self.pairs + 1)) / 2 ** self.pairs
        return chance <= PAIRED_CONFIDENCE

    @property
    def text(self):
        return f"{self.ratio:.2f} ({self.below} of {self.pairs} pairs below {self.target})"


def paired_verdict(numerators, denominators, target):
    """`median_ratio` of the pairs, judged against `target`."""
    ratios = pair_ratios(numerators, denominators)
    return PairedVerdict(statistics.median(ratios), sum(r < target for r in ratios), len(ratios), target)
