"""The inertia policy of the importer (docs/urdf-import.md, "Inertia"): the rigid body is
judged, not the link.

Links joined by fixed joints are one rigid body (its *root* is the child link of the moving
joint above them, or the robot's root link).  Only the composite of a body enters the
dynamics: its mass, centre of mass and inertia about that centre of mass (the parallel-axis
sum of its links' inertias).  So each *moving* body's composite inertia is judged by its
principal moments ``a <= b <= c`` [kg m^2], with an absolute floor
``INERTIA_FLOOR * max(1, |c|)`` below which a defect is rounding noise:

* ``a >= -floor`` and ``c <= a + b + floor``: a rigid body's, imported as written (a zero or
  near-zero inertia included: (-2.4e-35, 0, 2.4e-35) is one);
* triangle inequality broken (``c > a + b``) but positive semi-definite: imported as written
  with one warning (urdfdom, Pinocchio and Gazebo load it and it simulates fine);
  ``inertia='balance'`` sets the three moments to their mean, as MuJoCo's
  ``balanceinertia`` does;
* not positive semi-definite by up to ``ROUNDING`` of the largest moment: the negative moments
  are clipped to zero, warned (the frame model refuses a non-PSD inertia);
* beyond that: refused, naming the body, its links and the moments; ``inertia='repair'``
  moves it to the nearest valid inertia (negative moments clipped to zero, then the moments
  projected onto ``a + b >= c``), warned.

The body welded to the world (the robot's root link and every link fixed to it, unless
``floating_base=True`` hangs it on a free joint) never enters the mass matrix: it is not
judged; a link of it whose own inertia the frame model would
refuse gets its negative moments clipped, silently.  A link whose own inertia is not one the
frame model takes (not positive semi-definite beyond ``INERTIA_FLOOR``) but whose moving body
is fine, and any moving body whose inertia is changed, is lumped: the body's root link carries
the whole composite (mass, centre of mass, inertia), as Pinocchio merges fixed links.
"""
import numpy as np

from ..errors import name_list
from .errors import URDFError

__all__ = ['INERTIA_POLICIES', 'INERTIA_FLOOR', 'ROUNDING', 'judge_inertias']

#: values of the ``inertia`` import option
INERTIA_POLICIES = ('check', 'balance', 'repair')
#: absolute floor [kg m^2] (relative above 1 kg m^2) below which an inertia defect is rounding
#: noise: the tolerance Frame.set_inertia applies to a negative moment, 1e-12 kg m^2 being the
#: inertia of one gram 30 micrometres off the axis, far below what a description can mean
INERTIA_FLOOR = 1e-12
#: relative size of a negative principal moment that is clipped (with a warning), not refused:
#: what writing the tensor's six numbers to about six significant digits can produce
ROUNDING = 1e-6


def _fmt(values):
    return '[%s]' % ', '.join('%.9g' % x for x in values)


def _floor(scale):
    return INERTIA_FLOOR * max(1.0, scale)


def _frame_accepts(inertia):
    """Whether Frame.set_inertia takes ``inertia`` (3, 3): its own positive
    semi-definiteness test."""
    return np.linalg.eigvalsh(inertia).min() >= -_floor(float(np.abs(inertia).max()))


def _clipped(inertia):
    """``inertia`` (3, 3) with its negative principal moments set to zero."""
    ev, vecs = np.linalg.eigh(inertia)
    return _rebuild(vecs, np.clip(ev, 0.0, None))


def _rebuild(vecs, moments):
    out = (vecs * moments) @ vecs.T
    return 0.5 * (out + out.T)


def _principal(inertia):
    """``(moments (3,) ascending, axes (3, 3) as columns)`` of a symmetric ``inertia``;
    exact for a diagonal tensor, and scaled first so that moments near the largest float
    do not overflow in the eigen-solver."""
    if not (inertia[0, 1] or inertia[0, 2] or inertia[1, 2]):
        order = np.argsort(np.diag(inertia), kind='stable')
        return np.diag(inertia)[order], np.eye(3)[:, order]
    scale = float(np.abs(inertia).max())
    moments, vecs = np.linalg.eigh(inertia / scale)
    return moments * scale, vecs


def _bodies(plan):
    """[(root link, [links], {link: (4, 4) pose in the root link's frame})] of the rigid
    bodies (links joined by fixed joints), the robot's root body first."""
    out = []
    todo = [plan.root]
    while todo:
        root = todo.pop()
        links, poses = [root], {root: np.eye(4)}
        stack = [root]
        while stack:
            link = stack.pop()
            for j in plan.children[link]:
                if j.moving:
                    todo.append(j.child)
                else:
                    poses[j.child] = poses[link] @ j.origin
                    links.append(j.child)
                    stack.append(j.child)
        out.append((root, links, poses))
    return out


def _composite(plan, carriers, poses):
    """Mass [kg], centre of mass (3,) [m] and inertia (3, 3) [kg m^2] about it, in the
    axes of the body's root link, of the links ``carriers``."""
    parts = []
    for link in carriers:
        mass, inertia, origin = plan.inertials[link]
        G = poses[link] @ origin
        parts.append((mass, G[:3, 3], G[:3, :3]))
    total = sum(m for m, _, _ in parts)
    com = sum(m * p for m, p, _ in parts) / total if total > 0 else np.zeros(3)
    inertia = np.zeros((3, 3))
    for (m, p, R), link in zip(parts, carriers):
        d = p - com
        inertia += R @ plan.inertials[link][1] @ R.T + m * (d @ d * np.eye(3) - np.outer(d, d))
    return total, com, 0.5 * (inertia + inertia.T)


def judge_inertias(plan, where, tol, policy='check'):
    """Apply the inertia policy (module doc) to ``plan.inertials`` in place: each moving
    rigid body judged, repaired, balanced or lumped as the policy says; quirks go to ``tol``
    (a :class:`~.tolerance.Tolerance`), refusals raise :class:`URDFError` prefixed by
    ``where``.  ``policy``: ``'check'`` (default), ``'balance'`` or ``'repair'``."""
    if policy not in INERTIA_POLICIES:
        raise ValueError('inertia must be one of %s, got %r'
                         % (', '.join(map(repr, INERTIA_POLICIES)), policy))
    # the root body is welded to the world unless floating_base=True hung it on a free
    # joint (the one joint without a parent link)
    welded = None if any(j.parent is None for j in plan.joints) else plan.root
    for root, links, poses in _bodies(plan):
        carriers = [l for l in links if l in plan.inertials]
        if not carriers:
            continue
        if root == welded:                  # welded to the world: never in the dynamics
            for link in carriers:
                mass, inertia, origin = plan.inertials[link]
                if not _frame_accepts(inertia):
                    plan.inertials[link] = (mass, _clipped(inertia), origin)
            continue
        single = len(carriers) == 1
        if single:                          # judged in its own inertial axes: exact
            mass, inertia, origin = plan.inertials[carriers[0]]
        else:
            mass, com, inertia = _composite(plan, carriers, poses)
        moments, vecs = _principal(inertia)
        # named after its root link, or after its one link with an inertia
        fixed = _judged(moments, policy, where, carriers[0] if single else root, carriers,
                        tol)
        if single and fixed is None:
            continue
        if fixed is not None:
            inertia = _rebuild(vecs, fixed)
        elif all(_frame_accepts(plan.inertials[l][1]) for l in carriers):
            continue                        # every link as written
        if single:
            plan.inertials[carriers[0]] = (mass, inertia, origin)
            continue
        for link in carriers:               # lumped onto the root link, at the COM
            del plan.inertials[link]
        origin = np.eye(4)
        origin[:3, 3] = com
        plan.inertials[root] = (mass, inertia, origin)


def _judged(moments, policy, where, root, carriers, tol):
    """The principal moments (3,) to use instead of ``moments`` (ascending), or None to
    keep the inertia as written; warns or raises as the policy says, naming the body by
    ``root`` and the other ``carriers`` (its links with an inertia)."""
    scale = float(np.abs(moments).max())
    if scale == 0.0:
        return None
    floor = _floor(scale)
    others = [l for l in carriers if l != root]
    body = ('link %r' % root if len(carriers) == 1 else
            'link %r (one rigid body with %s fixed to it)' % (root, name_list(others)))
    problems, actions = [], []
    fixed = moments.copy()
    if moments[0] < -floor:
        if moments[0] < -ROUNDING * scale and policy != 'repair':
            raise URDFError(
                "%s: %s: inertia is not positive semi-definite beyond rounding (principal "
                "moments %s about its centre of mass [kg m^2]; negative moments up to %g of "
                "the largest are clipped); fix the description, or import with "
                "inertia='repair' to move it to the nearest valid inertia"
                % (where, body, _fmt(moments), ROUNDING))
        fixed = np.clip(fixed, 0.0, None)
        if moments[0] >= -ROUNDING * scale:
            problems.append("inertia is not a rigid body's by rounding (principal moments "
                            "%s: negative)" % _fmt(moments))
        else:
            problems.append('inertia is not positive semi-definite (principal moments %s)'
                            % _fmt(moments))
    a, b, c = fixed
    excess = (c - b) - a                # c >= b: no overflow near the largest float
    if excess > floor:
        if not problems:
            problems.append('inertia violates the triangle inequality (principal moments %s: '
                            '%.9g > %.9g + %.9g; no rigid body has these moments)'
                            % (_fmt(moments), c, a, b))
        if policy == 'balance':
            fixed = np.full(3, fixed.sum() / 3.0)
            actions.append("balanced it as MuJoCo's balanceinertia does (inertia='balance'): "
                           "the principal moments set to their mean %.9g" % fixed[0])
        elif policy == 'repair':
            d = excess / 3.0                        # Euclidean projection onto a + b >= c
            fixed = np.array([a + d, b + d, c - d])
    if not problems:
        return None
    if not actions:
        if np.array_equal(fixed, moments):
            actions.append("imported it as written (as urdfdom, Pinocchio and Gazebo do; "
                           "inertia='balance' evens the moments out as MuJoCo's "
                           "balanceinertia does)")
            fixed = None
        else:
            actions.append('repaired it to the nearest valid inertia (principal moments %s)'
                           % _fmt(np.sort(fixed)))
    if len(carriers) > 1:
        problems[0] = 'one rigid body with %s fixed to it, its %s' % (name_list(others),
                                                                      problems[0])
    tol.tolerate('link', root, ' and '.join(problems), ', then '.join(actions))
    return fixed
