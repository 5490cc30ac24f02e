"""Wall-clock pacing of fixed simulation ticks (no ROS: used by the simulator's step thread).

A :class:`Pacer` answers two questions for a loop that runs ticks of ``period`` wall seconds:
how many ticks are due now, and when the next one is.  Tick ``k`` after the anchor is due at
``anchor + k * period``, so the reference advances by whole periods and the average rate
holds exactly even when single ticks run late.  A backlog is caught up only while it stays
below ``max_lag`` wall seconds: a machine that cannot hold the rate (or a stall) moves the
anchor instead of spiralling, the dropped wall time is counted in :attr:`slipped` and the loop
simply runs slower than real time.

Example
-------
>>> p = Pacer(0.001, max_lag=0.1)
>>> p.start(now=10.0)
>>> p.due(10.0035)                  # ticks 1, 2, 3 are due
3
>>> p.advance(3); p.next_time()     # tick 4 at 10.004 s
10.004
"""
import math

__all__ = ['Pacer']


class Pacer:
    """Schedule of ticks ``period`` wall seconds apart, with catch-up bounded by ``max_lag``.

    Parameters
    ----------
    period : float
        Wall seconds per tick (``1 / (rate * real_time_factor)``), > 0.
    max_lag : float
        Largest backlog [wall s] that is caught up; beyond it the anchor moves forward.
    """

    def __init__(self, period, max_lag=0.1):
        if not period > 0 or not math.isfinite(period):
            raise ValueError('Pacer: period must be a finite number > 0, got %r' % (period,))
        self.period = float(period)
        self.max_lag = float(max_lag)
        self.anchor = None
        self.count = 0           # ticks run since the anchor
        self.slipped = 0.0       # wall seconds given up (not caught up) so far
        self.slips = 0           # how many times the anchor moved

    @property
    def started(self):
        return self.anchor is not None

    def start(self, now):
        """Tick 1 is due one period after ``now`` [s, monotonic]."""
        self.anchor = float(now)
        self.count = 0

    def stop(self):
        """Forget the anchor (paused): the next :meth:`start` begins a new schedule."""
        self.anchor = None
        self.count = 0

    def next_time(self):
        """Monotonic time [s] at which the next tick is due."""
        return self.anchor + (self.count + 1) * self.period

    def due(self, now):
        """Ticks due at ``now`` (>= 0).  A backlog above ``max_lag`` is dropped: the anchor
        moves so that exactly one tick is due, and :attr:`slipped` grows by what was given
        up."""
        late = now - self.next_time()
        if late < 0:
            return 0
        if late > self.max_lag:
            self.slipped += late
            self.slips += 1
            self.anchor += late
            return 1
        return int(late / self.period + 1e-9) + 1

    def advance(self, ticks=1):
        """Record ``ticks`` ticks as run."""
        self.count += int(ticks)
