"""The simulator's wall-clock schedule (ros_vi.ros.pacing.Pacer), on a clock given by hand."""
import pytest

from ros_vi.ros.pacing import Pacer


def test_ticks_are_due_whole_periods_after_the_anchor():
    p = Pacer(0.001, max_lag=0.1)
    p.start(10.0)
    assert p.due(10.0005) == 0 and p.next_time() == pytest.approx(10.001)
    assert p.due(10.0035) == 3            # ticks 1, 2, 3
    p.advance(3)
    assert p.next_time() == pytest.approx(10.004)
    # a late tick does not move the reference: the average rate holds
    assert p.due(10.0049) == 1
    p.advance()
    assert p.next_time() == pytest.approx(10.005) and p.slips == 0


def test_a_backlog_beyond_max_lag_is_dropped_and_counted():
    p = Pacer(0.001, max_lag=0.1)
    p.start(0.0)
    # a 0.5 s stall: one tick due now, the rest (about 0.499 s) given up
    assert p.due(0.5) == 1
    assert p.slips == 1 and p.slipped == pytest.approx(0.499)
    p.advance()
    assert p.next_time() == pytest.approx(0.501)
    # a backlog below max_lag is caught up in full
    assert p.due(0.55) == 50 and p.slips == 1


def test_stop_forgets_the_anchor_and_bad_periods_are_refused():
    p = Pacer(0.01)
    p.start(1.0)
    p.advance(5)
    p.stop()
    assert not p.started
    p.start(2.0)
    assert p.next_time() == pytest.approx(2.01)
    for bad in (0.0, -1.0, float('inf'), float('nan')):
        with pytest.raises(ValueError, match='period must be a finite number > 0'):
            Pacer(bad)
