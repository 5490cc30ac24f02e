"""The numbers of the globalized Newton iteration both paths run (docs/integrator.md).

The compiled step (:func:`ros_vi.integrators.step_body.newton_step`) and the general path
(:class:`ros_vi.integrators.general_step.GeneralStep`) solve the discrete Euler-Lagrange
equation with the same stopping rule and the same backtracking line search; these are
their constants, defined once.

Stopping rule: an iterate is a root when the 2-norm of the DEL residual is at most the
tolerance or ``ROUNDING`` times the size of the residual's terms, or when a Newton update
no longer changes it beyond ``STALLED`` (relative) while the residual is below
``STALL_ACCEPT`` times that size.  An attempt gives up when the merit has not fallen below
``STAGNATION_FACTOR`` of its value ``STAGNATION`` iterations earlier.

Line search on the merit 1/2 |r|^2 along the Newton direction (whose slope there is
-|r|^2): a trial step alpha passes when merit(alpha) <= (1 - 2 ``ARMIJO`` alpha) merit(0);
otherwise alpha shrinks by a factor within ``BACKTRACK``, at most ``MAX_BACKTRACKS`` times
per iteration.

Chord updates (systems without constraints or mimic joints; both paths): a step's first
update reuses the factors of the last Newton matrix of an earlier step of the same length
(within ``REUSE_DT``, relative), the modified Newton method of stiff ODE solvers: that matrix
is about -M/dt and moves by O(|qdot| dt) relative a step, so such an update gains about as
many digits.  After a full Newton update that passed at alpha = 1 and cut the residual from
r0 to r1 so that r1 (r1 / r0) is within ``CHORD_MARGIN`` of the tolerance (one more update
of that rate would converge), the next update reuses that Newton matrix's factors.  A chord
update that fails the merit test is undone and a full Newton update taken from the same
iterate; after one that passes, a full update follows unless the rule above predicts
convergence.  Where the matrix moves too fast for that first chord update to converge
alone (a step that still needed a full Newton update), the next steps do not try it: after
1, 2, 4, ... up to ``MAX_BACKOFF`` steps it is tried again, and the back-off ends when it
converges alone.  A restarted trajectory (a new start, a recovery) forgets the factors and
the back-off.

First guess (both paths): the extrapolation of the equally spaced past configurations, of
the order :func:`extrapolation_order` picks from their differences.
"""
import numpy as np
from numba import njit

ROUNDING = 64 * np.finfo(np.float64).eps   # residual floor relative to its terms' size
STALLED = 8 * np.finfo(np.float64).eps     # a Newton update this small (relative) changes
                                           # nothing: the iterate is converged to rounding
STALL_ACCEPT = np.sqrt(np.finfo(np.float64).eps)   # ... if the residual is this small
                                                   # relative to its terms' size
ARMIJO = 1e-4        # sufficient decrease: merit(alpha) <= (1 - 2 ARMIJO alpha) merit(0)
BACKTRACK = (0.1, 0.5)   # a backtrack shrinks alpha by a factor within these bounds
MAX_BACKTRACKS = 40      # per Newton iteration (alpha >= 0.1**40 is never needed)
CHORD_MARGIN = 0.1   # chord update when it is predicted to land this far inside tolerance
REUSE_DT = 1e-9      # relative difference of step lengths within which factors are reused
MAX_BACKOFF = 32     # at most this many steps without that reuse after it did not pay off
LIMIT_SLACK = 1e-12   # a config this far (relative) beyond a joint limit is held at it
# contacts (general_step): a sticking or sliding contact's gap and slip rows are solved to
# this [m]; an open contact this far past its plane becomes active; a sticking one's
# friction this far (relative) outside the cone slides; a sliding one whose slip over the
# step is below SLIP_REST [m] sticks (its direction is then taken from its last stick),
# unless sticking put its friction outside the cone in the same step: it is then at the
# cone's edge, held still by the others (it stays sliding, with no slip); a slip's
# direction is that of slip + SLIP_SCALE hint (general_step.slip_direction)
CONTACT_TOLERANCE = 1e-12
GAP_SLACK = 1e-12
CONE_SLACK = 1e-9
SLIP_FLOOR = 1e-14
SLIP_SCALE = 1e-11
SLIP_REST = 1e-13
# a solve that stalls with sliding contacts whose slip at its last iterate is below this
# [m] is retried with them sticking: near zero slip a sliding contact's friction turns
# with rounding (its direction's derivative grows as 1/slip) and Newton cannot settle it
SLIP_STALL = 1e-8
# of the sticking contacts out of their cones, those at least this fraction of the worst
# (friction over mu gamma) slide first: a box stopped on another by a stick trial loads the
# ground under that one too, but only the box on top should slide
SLIDE_GROUP = 0.5
OPEN, STICK, SLIDE = 0, 1, 2      # contact modes
# the broad phase [m]: a step's solve evaluates the contacts that are active, or whose gap
# at its start or predicted at its guess is below this; the others only at its roots
# (one evaluation each), where one found past its plane joins the solve (exact either way:
# this only sets how often that re-solve is needed)
WAKE_GAP = 0.01
# [m/(N s)]: a contact row holds gap = COMPLIANCE gamma and slip = -COMPLIANCE beta, which
# makes the impulses of a body on more points than it has freedoms unique (the least-norm
# ones); at a resting box's impulses (1e-2 N s) that is 1e-15 m, below the rounding of q
COMPLIANCE = 1e-13
STAGNATION = 10          # every this many iterations the merit must have fallen below
STAGNATION_FACTOR = 0.25  # this fraction of its value that many iterations before, or the
                          # attempt stops (a local minimum of the merit: subdivide instead)


@njit(cache=True, inline='always')
def beyond_limits(q1, dq, index, lower, upper):
    """True if a config ``q = q1 + dq`` (nq,) is beyond its joint limits, ``q[index[j]]``
    outside ``[lower[j], upper[j]]`` by more than :data:`LIMIT_SLACK` (relative: the rule the
    general step holds configs by)."""
    for j in range(index.shape[0]):
        i = index[j]
        x = q1[i] + dq[i]
        lo, up = lower[j], upper[j]
        if x < lo - LIMIT_SLACK * max(1.0, abs(lo)) or x > up + LIMIT_SLACK * max(1.0, abs(up)):
            return True
    return False


@njit(cache=True)
def extrapolation_order(hist, nd, order):
    """The order p <= ``order`` of the first guess's extrapolation from the past
    configurations ``hist`` (n, nQ) (oldest first; the last ``order + 1`` rows equally spaced
    in time, the last one q1), judged on the ``nd`` dynamic configs.

    The extrapolation of order p is the series q1 + sum over k = 1..p of the backward
    differences nabla^k q1 = sum_j (-1)^j C(k, j) q_(1-j).  On a smooth motion its terms
    shrink like (|qdot| dt)^k and the next order gains as much; where they stop shrinking
    (a jump of the inputs or of a constraint, or differences down at rounding) a higher
    order only amplifies that.  So the series stops before the first term from k = 3 on
    whose max-norm exceeds the one before it (orders 1 and 2 are always used: from rest the
    first difference may be smaller than the second)."""
    n = hist.shape[0]
    previous = np.inf
    for k in range(1, order + 1):
        size = 0.0
        for i in range(nd):
            acc = 0.0
            binom = 1.0
            for j in range(k + 1):
                # weight (-1)^j C(k, j) on the j-th most recent configuration
                w = binom if j % 2 == 0 else -binom
                acc += w * hist[n - 1 - j, i]
                binom = binom * (k - j) / (j + 1)
            size = max(size, abs(acc))
        if k >= 3 and size > previous:
            return k - 1
        previous = size
    return order
