"""Swing-up and catch: one controller owning the switch between a swing-up law and an LQR.

Hand-over rule (region-of-attraction estimate with hysteresis), evaluated every call on the
state the controller is given, ``V = x̃ᵀ P x̃`` the LQR cost-to-go (x̃ = [q - q̄ wrapped,
p - p̄], p = M(q) v)::

    mode 'swingup'  ->  'balance'   when V < c_in
    mode 'balance'  ->  'swingup'   when V > c_out        (c_out > c_in)

so the sublevel set {V < c_in} is the region trusted to the LQR, and the band
c_in <= V <= c_out keeps the current mode (no chattering at the boundary).  By default
``c_in = LQR.unsaturated_level()``, the largest sublevel set on which the LQR does not
saturate (on it the linearised closed loop is invariant and converges), and
``c_out = 2 c_in``.  Starting mode
is decided by the same rule from 'swingup'.  Because one object owns the switch, a ROS node
built on it is the only publisher on the joints.
"""
from .base import ControlOutput, Controller

__all__ = ['SwingUpAndBalance']


class SwingUpAndBalance(Controller):
    """``swingup`` far from the goal, ``balance`` (an :class:`LQR`) inside {V < c_in}.

    Both must be designed for the same joints, inputs and dt.  ``compute`` returns mode
    'balance' (LQR efforts) or the swing-up's mode ('swingup' / 'kick'); ``energy_error`` is
    the swing-up's Ẽ and ``cost`` is V.
    """

    def __init__(self, swingup, balance, c_in=None, c_out=None):
        if c_in is None:
            c_in = balance.unsaturated_level()
        if c_out is None:
            c_out = 2.0 * c_in
        if not 0 < c_in < c_out < float('inf'):
            raise ValueError('hand-over thresholds need 0 < c_in < c_out, got c_in=%r, '
                             'c_out=%r' % (c_in, c_out))
        for what in ('joint_names', 'input_names'):
            if getattr(swingup, what) != getattr(balance, what):
                raise ValueError('swing-up and balance controllers differ in %s: %s vs %s'
                                 % (what, getattr(swingup, what), getattr(balance, what)))
        if swingup.dt != balance.dt:
            raise ValueError('swing-up dt %g != balance dt %g' % (swingup.dt, balance.dt))
        self.swingup, self.balance = swingup, balance
        self.c_in, self.c_out = float(c_in), float(c_out)
        Controller.__init__(self, balance.system, balance.dt, balance.input_names,
                            balance.u_max)
        self.balancing = False

    def reset(self):
        self.balancing = False
        self.swingup.reset()
        self.balance.reset()

    def _law(self, q, v):
        cost = self.balance.cost_to_go(q, v)
        if self.balancing and cost > self.c_out:
            self.balancing = False
        elif not self.balancing and cost < self.c_in:
            self.balancing = True
        swing = self.swingup._law(q, v)
        if self.balancing:
            return ControlOutput(self.balance._law(q, v).u, 'balance', swing.energy_error,
                                 cost)
        return ControlOutput(swing.u, swing.mode, swing.energy_error, cost)
