"""The simulator's ``diagnostics``: counters kept by the step thread, one
``diagnostic_msgs/DiagnosticArray`` assembled from them and the simulation.

Level and message, in order of precedence: ERROR when the last tick failed (state held);
WARN when ticks failed since the last report, when a command was rejected, or when the loop
runs behind real time; OK ("running" or "paused") otherwise.  The key/value pairs are listed
in docs/simulator.md.
"""
import time

import numpy as np

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from ..errors import shorten
from . import conversions as conv

__all__ = ['SimulatorDiagnostics']

#: characters of an error or rejection text on diagnostics (the log line has the same cut)
MAX_TEXT = 2000


def _text(message):
    return shorten(message, limit=MAX_TEXT, quote=False)

class SimulatorDiagnostics:
    """What the simulator reports between two diagnostics messages (step thread only)."""

    def __init__(self, period):
        self.period = period             # wall s between messages
        self.rejected = 0                # commands rejected since the start
        self.last_rejection = ''         # since the last message
        self.lockstep_timeouts = 0
        self._ticks = 0
        self._iterations = 0
        self._wall = time.monotonic()
        self._last_failures = 0
        self._due = time.monotonic() + period

    def count_tick(self, result):
        """A tick was run (its :class:`~ros_vi.simulation.TickResult`)."""
        self._ticks += 1
        self._iterations += result.iterations

    def reject(self, problem):
        """A command was rejected for ``problem``."""
        self.rejected += 1
        self.last_rejection = problem

    def due(self, now):
        """Wall seconds until the next message is due (<= 0: now)."""
        return self._due - now

    def since_last(self, now):
        """Wall seconds since the last message."""
        return now - self._wall

    def message(self, node, extra):
        """The DiagnosticArray for the simulator ``node`` (its ``sim`` and ``cfg``) now, with
        the node's own ``extra`` key/values ({str: str}); starts the next period."""
        sim, cfg = node.sim, node.cfg
        now = time.monotonic()
        elapsed = max(now - self._wall, 1e-9)
        rate = self._ticks / elapsed
        mean_it = self._iterations / self._ticks if self._ticks else 0.0
        status = DiagnosticStatus()
        status.name = '%s: simulation' % node.get_fully_qualified_name()
        status.hardware_id = sim.robot.name if sim.robot is not None and sim.robot.name \
            else 'ros_vi'
        new_failures = sim.failures - self._last_failures
        rtf = cfg.real_time_factor
        if not sim.last_result.ok:
            status.level, status.message = DiagnosticStatus.ERROR, \
                'VI step failed, state held: %s' % _text(sim.last_error)
        elif new_failures:
            status.level, status.message = DiagnosticStatus.WARN, \
                '%d ticks failed since the last report (state held)' % new_failures
        elif self.last_rejection:
            status.level, status.message = DiagnosticStatus.WARN, \
                'rejected command: %s' % _text(self.last_rejection)
        elif not sim.paused and not cfg.lockstep and rtf > 0 and \
                rate < 0.95 * cfg.rate * rtf and self._ticks > 0:
            status.level, status.message = DiagnosticStatus.WARN, \
                'behind real time: %.1f Hz of %.1f Hz' % (rate, cfg.rate * rtf)
        else:
            status.level, status.message = DiagnosticStatus.OK, \
                'paused' if sim.paused else 'running'
        values = {
            'sim_time': '%.9f' % sim.t,
            'ticks': str(sim.ticks),
            'tick_rate_hz': '%.3f' % rate,
            'target_tick_rate_hz': '%.3f' % (cfg.rate * rtf) if rtf else 'max',
            'real_time_factor': '%.4f' % (rate / cfg.rate),
            'iterations_last': str(sim.last_result.iterations),
            'iterations_mean': '%.3f' % mean_it,
            'substeps_last': str(sim.last_result.substeps),
            'energy': '%.12g' % sim.state().energy,
            'paused': str(sim.paused).lower(),
            'lockstep': str(cfg.lockstep).lower(),
            'failures': str(sim.failures),
            'retries': str(sim.retries),
            'last_error': _text(sim.last_error or ''),
            'rejected_commands': str(self.rejected),
            'last_rejection': _text(self.last_rejection),
            'command_interfaces': ';'.join('%s:%s' % (j, ','.join(i)) for j, i in
                                           sim.command_interfaces.items() if i),
            'active_interfaces': ','.join('%s:%s' % ji for ji in
                                          sim.active_interfaces().items()),
            'lockstep_timeouts': str(self.lockstep_timeouts),
            'timed_out_joints': ','.join(sim.timed_out()),
        }
        values.update(_contact_values(sim))
        values.update(extra)
        status.values = [KeyValue(key=k, value=v) for k, v in values.items()]
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = conv.time_msg(sim.t)
        self._wall = now
        self._due = now + self.period
        self._ticks = 0
        self._iterations = 0
        self._last_failures = sim.failures
        self.last_rejection = ''
        return msg


def _contact_values(sim):
    """The joint limits and contacts of the last step: the joints held at a limit, the
    contacts (count), the active ones (sticking or sliding), the sliding ones, the
    smallest gap [m] at the published state and the largest normal impulse times gap
    [N s m] (complementarity residual; empty without contacts)."""
    mvi = sim.mvi
    names = sim.joint_names
    values = {'joints_at_limits': ','.join(names[i] for i in mvi.held_configs)}
    contacts = sim.system.contacts
    modes = mvi.contact_modes
    values['contacts'] = str(len(contacts))
    values['contacts_active'] = str(sum(m != 'open' for m in modes))
    values['contacts_sliding'] = str(sum(m == 'slide' for m in modes))
    gap = mvi.contact_gaps
    values['contact_gap_min'] = '%.3g' % min(gap) if len(gap) else ''
    # the complementarity residual: a pushing contact must be closed (gamma * gap = 0)
    values['contact_complementarity'] = ('%.3g' % np.max(np.abs(
        mvi.contact_impulses[:, 0] * gap)) if len(gap) else '')
    return values
