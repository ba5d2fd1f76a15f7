"""The Watchdog of a running grasp: telemetry classified as it grows, poll by poll.

Why: a grasp runs across ticks, and a tree should be able to stop one whose Watchdog already
says EMPTY or STALL instead of waiting for the motion to end. Each `update` feeds the streaming
classifier only the samples it has not seen yet (O(new samples) per poll, never the whole stream
again); the label becomes final once its signature has been stable for the settle (or stall)
window, and `final()` on the whole attempt equals the batch classifier on the same telemetry.
"""

from __future__ import annotations

from dataclasses import fields

from bt_grasp.watchdog.stream import StreamingClassifier
from bt_grasp.watchdog.telemetry import Sample, Telemetry
from bt_grasp.watchdog.thresholds import WatchdogThresholds
from bt_grasp.watchdog.verdict import Verdict

_COLUMNS = tuple(f.name for f in fields(Sample))


class LiveWatchdog:
    """Feed a growing Telemetry (the samples so far of one attempt); read the label once final.

    The telemetry is assumed to grow by appending (a driver's record of one motion): rows already
    fed are never read again.
    """

    def __init__(self, th: WatchdogThresholds | None = None) -> None:
        self.classifier = StreamingClassifier(th)
        self.seen = 0  # rows of the telemetry already fed

    @property
    def verdict(self) -> Verdict | None:
        """The label decided so far (stable for its window); None while nothing is final."""
        return self.classifier.verdict

    def update(self, tel: Telemetry) -> Verdict | None:
        """Feed the rows of `tel` not seen yet; the verdict if one is final now."""
        n = len(tel)
        if self.classifier.verdict is not None or n <= self.seen:
            self.seen = max(self.seen, n)
            return self.classifier.verdict
        cols = [getattr(tel, name)[self.seen:n].tolist() for name in _COLUMNS]
        self.seen = n
        feed = self.classifier.feed
        for row in zip(*cols, strict=True):
            if feed(dict(zip(_COLUMNS, row, strict=True))) is not None:
                break
        return self.classifier.verdict

    def final(self, tel: Telemetry) -> Verdict:
        """The attempt has ended with telemetry `tel`: its verdict (the batch classifier's)."""
        self.update(tel)
        return self.classifier.finish()
