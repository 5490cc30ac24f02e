"""ros_vi's MidpointVI against MuJoCo and Pinocchio on the same robots, in one run.

Robots (benchmarks/robots.py): the shipped URDFs (pendulum, cartpole, acrobot, arm7), the
7-DOF arm with a parallel gripper whose right finger is a ``<mimic>`` of the left one, a
44-joint humanoid with 12 ``<mimic>`` finger joints (32 independent DOF), and a four-bar
linkage: closed (a loop URDF cannot express: ros_vi frames + ``PointToPoint2D``, MJCF
``<equality><connect>``, Pinocchio ``RigidConstraintModel``) and as the same open chain.
Visuals, collisions and ``<dynamics>`` (damping, friction) are removed; contacts and joint
limits are off; gravity (0, 0, -9.81) m/s^2; dt = 1 ms for every engine.

Engines:
  * ros_vi: ``MidpointVI`` (tolerance 1e-10), one ``step`` call per step (``compiled``:
    the single-call numba step; otherwise the general NumPy path);
  * MuJoCo: integrators Euler (semi-implicit), RK4 and implicitfast, one ``mj_step`` call
    per step; mimic joints are the joint equality constraints MuJoCo's URDF import creates
    (soft constraints, default solref/solimp), the loop a ``connect`` equality;
  * Pinocchio: semi-implicit Euler (v += dt a; q = integrate(q, dt v)) with a = ABA; on a
    mimic model (``mimic=True``, exact reduction) ABA is not available, so a = M^-1 (tau - b)
    with M = CRBA, b = nonLinearEffects; the closed loop uses ``constraintDynamics`` with
    Baumgarte stabilisation (Kp = 400 1/s^2, Kd = 40 1/s).

First the mass matrices are compared at random configurations in the independent joint
coordinates (``q_full = E q + c`` from the ``<mimic>`` tags: ros_vi's and MuJoCo's full
matrices are reduced as E^T M E; Pinocchio's mimic model is already reduced; a ros_vi that
reduces mimic joints itself is compared directly).  Then, per robot and engine, 10 s of
simulated time from a nonzero configuration at rest with no inputs: median µs per step over
blocks of steps, steps/s, energy error |E(t) - E(0)| at the end and its maximum over the
run, the largest constraint violation (mimic: |q_m - k q_ref - c|; loop: the gap [m]), and
ros_vi's time over each baseline's.  For ros_vi also: Newton iterations per step, the Python
call floor of ``MidpointVI.step`` (the step call against a direct call of the compiled
kernel ``fast_step.step_packed(I, F, W)`` on the same packed arrays), and the growth of the
cost with the number of joints (spatial chains of 2..64 revolute joints, exponent fitted).

Floating robots (``urdf/quadruped.urdf``, 6 + 12 DOF, and ``urdf/humanoid.urdf``, 6 + 31
DOF; ``--floating``): zero gravity, no ground or contact, the base started with a twist and
every joint driven by its own sinusoidal torque (FloatingCase); ros_vi imports them with
``floating_base=True`` (a free joint), MuJoCo from the same URDF with a free joint added to
the root body (MjSpec), Euler and RK4.  Per engine: µs per step (the torques computed in
Python each step for both) and the largest relative change over the run of the total linear
and angular momentum (ros_vi: the momentum map of (q2, p2) after ``recenter()``, the
quantity its discrete Noether theorem conserves; MuJoCo: ``mj_subtreeVel`` of the root at
its state), and the part of ros_vi's step spent re-centring the free joint's chart.  The
engines run interleaved (a block of steps of each in turn), so that a slower or faster phase
of the machine reaches all of them alike.

    python benchmarks/bench_vs_mujoco.py [--seconds 10] [--robots arm7 humanoid44 ...]
        [--sweep 2 4 8 16 32 64] [--sweep-steps 500] [--floor-calls 3000] [--no-sweep]
        [--floating quadruped humanoid]
    python benchmarks/bench_vs_mujoco.py --robots --no-sweep     # the floating table only

MuJoCo and Pinocchio are benchmark-only extras (requirements-bench.txt); an engine that is
not installed is reported as such.
"""
import argparse
import inspect
import os
import re
import sys
import time
import warnings
import xml.etree.ElementTree as ET

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]      # this checkout's ros_vi, robots.py
import robots as R  # noqa: E402

from ros_vi import ConvergenceError, MidpointVI  # noqa: E402
from ros_vi.mechanics import dynamics  # noqa: E402
from ros_vi.urdf import import_urdf, rpy_matrix  # noqa: E402

try:
    import mujoco
except ImportError:           # a benchmark-only extra
    mujoco = None
try:
    import pinocchio as pin
except ImportError:
    pin = None

DT = 1e-3
MJ_WARNINGS = {}                  # MuJoCo's warning texts -> count (printed at the end)
TOLERANCE = 1e-10
MJ_INTEGRATORS = ('Euler', 'RK4', 'implicitfast')
PIN_BAUMGARTE = (400.0, 40.0)     # Kp [1/s^2], Kd [1/s] of Pinocchio's loop closure


LEGEND = """
Legend
- DOF: independent degrees of freedom (mimic joints follow their leader; the four-bar's
  three joints keep one DOF).  ros_vi form: how ros_vi holds mimic joints (reduced: no
  config; constraints: a config + a Mimic constraint) or the loop, and whether
  MidpointVI.compiled is True (the single-call numba step) or False (general NumPy path).
- max abs dM: the largest entry of ros_vi's mass matrix minus the other engine's, in the
  independent coordinates (E^T M E of full matrices), over %(configs)d random configurations.
  max abs M: the largest entry, for scale.  d(dV): the potential energy change from the
  zero configuration to q0, ros_vi minus each engine (the bodies fixed to the world add a
  constant to ros_vi's potential that the baselines omit, so E itself is not compared).
- µs/step: median over blocks of %(block)d steps, one Python call per step (mvi.step,
  mj_step, a few Pinocchio calls); steps/s = 1e6 / µs.  ros_vi / engine > 1: ros_vi slower.
- dE: |E(t) - E(0)| of T + V after the run and its maximum over the run (sampled after
  every block) [J].  max violation: max |q_m - k q_ref - c| over the mimic joints [rad, m],
  or the loop gap [m] of the four-bar.
- Floating robots: DOF = 6 (the free base) + joints.  max rel. dP, dL: max over the run of
  |P(t) - P(0)| / |P(0)| and |L(t) - L(0)| / |L(0)| (L about the world origin), sampled
  every block; max joint speed [rad/s]: the fastest joint sampled.  The engines run
  interleaved, a block of each in turn.  |dP0|, |dL0|: the engines' initial momenta (same
  state).
- Python floor: mvi.step minus the compiled kernel step_packed(I, F, W) (with constraints
  step_constrained_packed(I, F, W, CI, CF, CW)) called directly on
  the same packed arrays (an identical second integrator), both doing the same Newton work.
"""


class Diverged(Exception):
    """The simulation left the finite numbers or its solver gave up."""


# ---------------------------------------------------------------------- robots
class Robot:
    """One benchmark robot: its joints in a canonical order (``joints``, full; ``independent``,
    without the mimic joints), the reduction q_full = E q_ind + c, a start configuration
    ``q0`` (independent coordinates) and how each engine builds it."""

    def __init__(self, name, joints, mimics, q0, urdf=None, loop=None):
        self.name, self.joints, self.mimics, self.urdf = name, joints, mimics, urdf
        self.loop = loop                   # None (a URDF tree) or True/False (the four-bar)
        self.independent, self.E, self.c = R.reduction(joints, mimics)
        self.q0 = np.array([q0[n] for n in self.independent])

    @property
    def closed(self):
        return bool(self.loop)

    def full(self, q_ind):
        return self.E @ q_ind + self.c

    def violation(self, q_full):
        """Largest constraint residual of a full configuration (mimic [rad or m], loop [m])."""
        if self.closed:
            return R.fourbar_loop_residual(q_full)
        if not self.mimics:
            return 0.0
        return float(np.max(np.abs(q_full - self.full(q_full[self._ind_rows]))))

    @property
    def _ind_rows(self):
        return [self.joints.index(n) for n in self.independent]

    def random_configurations(self, count, seed=100):
        out = []
        for k in range(count):
            if self.urdf is not None:
                q = R.initial_configuration(self.urdf, seed=seed + k, scale=1.0)
                out.append(np.array([q[n] for n in self.independent]))
            else:
                out.append(np.random.default_rng(seed + k).uniform(-1.5, 1.5,
                                                                  len(self.independent)))
        return out


def urdf_robot(name, text):
    text = R.benchmark_urdf(text)
    return Robot(name, R.moving_joints(text), R.mimic_table(text),
                 R.initial_configuration(text, seed=0), urdf=text)


def fourbar_robot(closed):
    _, q0 = R.fourbar_system(closed)
    names = [n for n, _, _ in R.FOURBAR_LINKS]
    return Robot('fourbar' if closed else 'fourbar_open', names, {}, dict(zip(names, q0)),
                 loop=closed)


def all_robots():
    out = [urdf_robot(n, R.shipped(n)) for n in R.SHIPPED]
    out.append(urdf_robot('arm7_gripper', R.arm7_gripper()))
    out.append(urdf_robot('humanoid44', R.humanoid44()))
    out.append(fourbar_robot(True))
    out.append(fourbar_robot(False))
    return out


# ---------------------------------------------------------------------- engines
# import_urdf's choice of mimic formulation, where this ros_vi has one
MIMIC_OPTION = 'mimic' in inspect.signature(import_urdf).parameters


class RosVI:
    """ros_vi: ``import_urdf`` (or the four-bar System) + ``MidpointVI``.  ``mimic``: the
    importer's mimic formulation (None: its default)."""

    def __init__(self, robot, mimic=None):
        self.robot = robot
        self.label = 'ros_vi' if mimic is None else 'ros_vi mimic=%r' % mimic
        if robot.urdf is not None:
            # the MuJoCo models have no joint limits: neither has ros_vi here
            options = dict(enforce_limits=False)
            if mimic is not None:
                options['mimic'] = mimic
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                self.system = import_urdf(robot.urdf, gravity=R.GRAVITY, **options)
        else:
            self.system, _ = R.fourbar_system(robot.closed)
        s = self.system
        names = {c.name for c in s.configs}
        # with the mimic joints as configs (held by Mimic constraints) ros_vi's matrices
        # are reduced with E; a ros_vi that reduces mimic joints itself has none of them
        self.mimic_configs = all(m in names for m in robot.mimics)
        self.order = robot.joints if self.mimic_configs else robot.independent
        self.index = np.array([s.get_config(n).index for n in self.order])
        self.mvi = MidpointVI(s, tolerance=TOLERANCE)
        self.exact_mimic = not robot.closed and not self.mimic_configs   # no config to drift
        self.u = np.zeros(s.nu)
        self.data = s.model.create_data()
        self.iterations = 0
        self.k = 0

    @property
    def note(self):
        if not self.robot.mimics:
            return ''
        return ('mimic held by Mimic constraints' if self.mimic_configs
                else 'mimic reduced')

    def _system_q(self, q_ind):
        q = np.zeros(self.system.nQ)
        vals = self.robot.full(q_ind) if self.mimic_configs else q_ind
        q[self.index] = vals
        return q

    def mass_matrix(self, q_ind):
        self.data.set(self._system_q(q_ind), np.zeros(self.system.nQ))
        M = dynamics.mass_matrix(self.system.model, self.data)[np.ix_(self.index, self.index)]
        if self.mimic_configs:
            E = self.robot.E
            return E.T @ M @ E
        return M

    def reset(self, q_ind):
        self.mvi.initialize_from_state(0.0, self._system_q(q_ind), np.zeros(self.system.nQd))
        self.k = 0
        self.iterations = 0

    def run_block(self, n):
        step, u, k0 = self.mvi.step, self.u, self.k
        it = 0
        try:
            for k in range(k0 + 1, k0 + n + 1):
                it += step(k * DT, u)
        except ConvergenceError as exc:
            raise Diverged(str(exc)) from None
        self.k += n
        self.iterations += it

    @property
    def t(self):
        return self.mvi.t2

    def q_full(self):
        q = self.mvi.q2[self.index]
        return q if self.mimic_configs else self.robot.full(q)

    def energy(self):
        """(T, V) [J] of (q2, p2): velocities from the Legendre transform, tangent to the
        constraints (M v = p2 + Dh^T mu, Dh v = 0)."""
        s, data = self.system, self.data
        q, p = self.mvi.q2, self.mvi.p2
        nd = s.nQd
        data.set(q, np.zeros(s.nQ))
        with s.evaluate_at(data):
            M = dynamics.mass_matrix(s.model, data)[:nd, :nd]
            if s.nc:
                Dh = s.constraint_jacobian()[:, :nd]
                nc = Dh.shape[0]
                A = np.block([[M, Dh.T], [Dh, np.zeros((nc, nc))]])
                v = np.linalg.lstsq(A, np.concatenate([p, np.zeros(nc)]), rcond=None)[0][:nd]
            else:
                v = np.linalg.solve(M, p)
            data.set(q, v)
            return s.kinetic_energy(), s.potential_energy()


class MuJoCo:
    """MuJoCo: the URDF through ``MjSpec`` (or the four-bar MJCF), one integrator."""

    def __init__(self, robot, integrator):
        self.robot = robot
        self.label = 'MuJoCo %s' % integrator
        if robot.urdf is not None:
            spec = mujoco.MjSpec.from_string(robot.urdf)
            # MuJoCo refuses a moving body without rotational inertia (the pendulum's point
            # mass): the compiler raises such inertias to 1e-10 kg m^2
            spec.compiler.boundinertia = 1e-10
            model = spec.compile()
            if int(np.sum(model.eq_type == mujoco.mjtEq.mjEQ_JOINT)) < len(robot.mimics):
                # this MuJoCo's URDF import ignored <mimic>: add the joint equalities
                for name, (ref, mult, off) in robot.mimics.items():
                    eq = spec.add_equality()
                    eq.type = mujoco.mjtEq.mjEQ_JOINT
                    eq.name1, eq.name2 = name, ref
                    eq.data[:5] = [off, mult, 0.0, 0.0, 0.0]
                model = spec.compile()
        else:
            model = mujoco.MjModel.from_xml_string(R.fourbar_mjcf(robot.closed, DT))
        opt = model.opt
        opt.timestep = DT
        opt.gravity[:] = R.GRAVITY
        opt.integrator = getattr(mujoco.mjtIntegrator, 'mjINT_' + integrator.upper())
        off = mujoco.mjtDisableBit
        opt.disableflags |= (off.mjDSBL_CONTACT | off.mjDSBL_LIMIT | off.mjDSBL_FRICTIONLOSS
                             | off.mjDSBL_AUTORESET)
        self.m, self.d = model, mujoco.MjData(model)
        ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in robot.joints]
        if min(ids) < 0:
            raise ValueError('MuJoCo model lacks joints %s'
                             % [n for n, i in zip(robot.joints, ids) if i < 0])
        self.exact_mimic = False                  # soft equality constraints
        self.qadr = model.jnt_qposadr[ids]
        self.vadr = model.jnt_dofadr[ids]
        self.note = ('%d joint equalities' % model.neq if robot.mimics
                     else 'connect equality' if robot.closed else '')

    def mass_matrix(self, q_ind):
        m = self.m
        d = mujoco.MjData(m)
        d.qpos[self.qadr] = self.robot.full(q_ind)
        mujoco.mj_forward(m, d)
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        E = self.robot.E
        return E.T @ M[np.ix_(self.vadr, self.vadr)] @ E

    def reset(self, q_ind):
        mujoco.mj_resetData(self.m, self.d)
        self.d.qpos[self.qadr] = self.robot.full(q_ind)

    def run_block(self, n):
        m, d, step = self.m, self.d, mujoco.mj_step
        for _ in range(n):
            step(m, d)
        if (d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number
                or not np.all(np.isfinite(d.qpos))):
            raise Diverged('bad acceleration')

    @property
    def t(self):
        return self.d.time

    def q_full(self):
        return self.d.qpos[self.qadr].copy()

    def energy(self):
        m, d = self.m, self.d
        on = int(mujoco.mjtEnableBit.mjENBL_ENERGY)
        m.opt.enableflags |= on          # only for this evaluation: steps are timed without
        mujoco.mj_forward(m, d)
        m.opt.enableflags &= ~on
        return float(d.energy[1]), float(d.energy[0])


class Pinocchio:
    """Pinocchio: ABA (or CRBA + NLE on a mimic model, constraintDynamics for the loop)
    with semi-implicit Euler."""

    label = 'Pinocchio'

    def __init__(self, robot):
        self.robot = robot
        self.constraints = None
        if robot.urdf is not None:
            self.model = pin.buildModelFromXML(robot.urdf, mimic=bool(robot.mimics))
            self.model.gravity.linear = np.array(R.GRAVITY)
            self.full_model = None
            if robot.mimics:
                self.full_model = pin.buildModelFromXML(robot.urdf)
                self.full_model.gravity.linear = np.array(R.GRAVITY)
                self.full_data = self.full_model.createData()
            self.method = 'CRBA+NLE (mimic model)' if robot.mimics else 'ABA'
        else:
            self.model, constraints = R.fourbar_pinocchio(robot.closed)
            self.full_model = None
            self.method = 'ABA'
            if constraints:
                for c in constraints:
                    bp = c.m_baumgarte_parameters
                    bp.Kp, bp.Kd = PIN_BAUMGARTE
                    c.setBaumgarteCorrectorParameters(bp)
                self.constraints = pin.StdVec_RigidConstraintModel(constraints)
                self.constraint_data = pin.StdVec_RigidConstraintData(
                    [c.createData() for c in constraints])
                self.method = 'constraintDynamics (Baumgarte)'
        self.data = self.model.createData()
        if self.constraints is not None:
            pin.initConstraintDynamics(self.model, self.data, self.constraints,
                                       self.constraint_data)
            self.prox = pin.ProximalSettings(1e-12, 1e-8, 20)
        self.slots = self._slots(self.model, robot.independent)
        if self.full_model is not None:
            self.full_slots = self._slots(self.full_model, robot.joints)
        self.tau = np.zeros(self.model.nv)
        self.note = self.method
        self.exact_mimic = bool(robot.mimics)     # the mimic model has no mimic coordinates
        self.time = 0.0

    @staticmethod
    def _slots(model, names):
        out = []
        for n in names:
            jm = model.joints[model.getJointId(n)]
            out.append((jm.idx_q, jm.nq, jm.idx_v))
        return out

    @staticmethod
    def _to_q(model, slots, values):
        q = pin.neutral(model)
        for (iq, nq, _), x in zip(slots, values):
            if nq == 2:               # continuous joint: (cos, sin)
                q[iq:iq + 2] = np.cos(x), np.sin(x)
            else:
                q[iq] = x
        return q

    def _from_q(self, q):
        return np.array([np.arctan2(q[iq + 1], q[iq]) if nq == 2 else q[iq]
                         for iq, nq, _ in self.slots])

    def mass_matrix(self, q_ind):
        M = pin.crba(self.model, self.data, self._to_q(self.model, self.slots, q_ind))
        M = np.triu(M) + np.triu(M, 1).T
        cols = [iv for _, _, iv in self.slots]
        return M[np.ix_(cols, cols)]

    def reset(self, q_ind):
        self.q = self._to_q(self.model, self.slots, q_ind)
        self.v = np.zeros(self.model.nv)
        self.time = 0.0

    def run_block(self, n):
        m, d, q, v, tau = self.model, self.data, self.q, self.v, self.tau
        integrate = pin.integrate
        if self.constraints is not None:
            dyn, cm, cd, prox = pin.constraintDynamics, self.constraints, self.constraint_data, \
                self.prox
            for _ in range(n):
                v = v + DT * dyn(m, d, q, v, tau, cm, cd, prox)
                q = integrate(m, q, DT * v)
        elif self.full_model is not None:
            crba, nle, solve = pin.crba, pin.nonLinearEffects, np.linalg.solve
            try:
                for _ in range(n):
                    M = crba(m, d, q)
                    M = np.triu(M) + np.triu(M, 1).T
                    v = v + DT * solve(M, tau - nle(m, d, q, v))
                    q = integrate(m, q, DT * v)
            except np.linalg.LinAlgError as exc:      # a non-finite state
                raise Diverged(str(exc)) from None
        else:
            aba = pin.aba
            for _ in range(n):
                v = v + DT * aba(m, d, q, v, tau)
                q = integrate(m, q, DT * v)
        self.q, self.v = q, v
        self.time += n * DT
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            raise Diverged('non-finite state')

    @property
    def t(self):
        return self.time

    def _v_ind(self):
        return np.array([self.v[iv] for _, _, iv in self.slots])

    def q_full(self):
        return self.robot.full(self._from_q(self.q))

    def energy(self):
        if self.full_model is None:
            m, d, q, v = self.model, self.data, self.q, self.v
        else:
            m, d = self.full_model, self.full_data
            q = self._to_q(m, self.full_slots, self.q_full())
            v_full = self.robot.E @ self._v_ind()
            v = np.zeros(m.nv)
            for (_, _, iv), x in zip(self.full_slots, v_full):
                v[iv] = x
        return (float(pin.computeKineticEnergy(m, d, q, v)),
                float(pin.computePotentialEnergy(m, d, q)))


def make_engines(robot):
    """[(label, engine or the reason there is none)] for one robot."""
    out = [('ros_vi', RosVI(robot))]
    if robot.mimics and MIMIC_OPTION:
        # the other formulation: mimic joints as configs held by Mimic constraints
        other = 'constraint' if not out[0][1].mimic_configs else 'reduce'
        eng = RosVI(robot, mimic=other)
        out.append((eng.label, eng))
    for integ in MJ_INTEGRATORS:
        label = 'MuJoCo %s' % integ
        if mujoco is None:
            out.append((label, 'not installed'))
            continue
        try:
            out.append((label, MuJoCo(robot, integ)))
        except Exception as exc:       # a model an engine refuses: say so, keep going
            out.append((label, 'error: %s' % str(exc).splitlines()[0]))
    if pin is None:
        out.append(('Pinocchio', 'not installed'))
    else:
        try:
            out.append(('Pinocchio', Pinocchio(robot)))
        except Exception as exc:
            out.append(('Pinocchio', 'error: %s' % str(exc).splitlines()[0]))
    return out


# ---------------------------------------------------------------------- measurements
def simulate(engine, robot, seconds, block):
    """Run ``seconds`` of simulated time from robot.q0 at rest in blocks of ``block`` steps.

    Returns a dict: us (median µs per step over blocks), dE_end, dE_max [J] (|E - E(0)|
    after the run and its maximum, sampled after every block), T_max [J] (the largest
    kinetic energy sampled), violation (max constraint residual), diverged (the end time
    [s] of the block in which the state stopped being finite, or None; the energies are
    then NaN)."""
    engine.reset(robot.q0)
    engine.run_block(min(block, 20))            # warm-up (compiled kernels, caches)
    engine.reset(robot.q0)
    E0 = sum(engine.energy())
    nblocks = max(1, int(round(seconds / DT)) // block)
    out = dict(us=np.nan, diverged=None, dE_end=np.nan, dE_max=0.0, T_max=0.0,
               violation=robot.violation(engine.q_full()))
    times = []
    clock = time.perf_counter
    for _ in range(nblocks):
        start = engine.t
        t0 = clock()
        try:
            engine.run_block(block)
        except Diverged:
            out['diverged'] = start + block * DT
            break
        times.append(clock() - t0)
        T, V = engine.energy()
        dE = abs(T + V - E0)
        if not np.isfinite(dE):
            out['diverged'] = engine.t
            break
        out['dE_end'] = dE
        out['dE_max'] = max(out['dE_max'], dE)
        out['T_max'] = max(out['T_max'], T)
        out['violation'] = max(out['violation'], robot.violation(engine.q_full()))
    if out['diverged'] is not None:
        out['dE_end'] = out['dE_max'] = out['T_max'] = np.nan
    out['us'] = _median_us(times, block)
    return out


def _median_us(times, block):
    return 1e6 * float(np.median(times)) / block if times else np.nan


def mass_matrix_check(robot, engines, count):
    """{label: max |M_ros_vi - M_label|} over ``count`` random configurations (independent
    coordinates), and max |M| for scale."""
    ref = engines[0][1]
    dev, scale = {}, 0.0
    for q in robot.random_configurations(count):
        M0 = ref.mass_matrix(q)
        scale = max(scale, float(np.abs(M0).max()))
        for label, eng in engines[1:]:
            if isinstance(eng, str):
                continue
            d = float(np.abs(eng.mass_matrix(q) - M0).max())
            dev[label] = max(dev.get(label, 0.0), d)
    return dev, scale


def potential_check(robot, engines):
    """max |dV_engine - dV_ros_vi| [J] with dV = E(q0) - E(0) at rest: the bodies fixed to
    the world add a constant to ros_vi's potential that the baselines leave out."""
    dV = {}
    for label, eng in engines:
        if isinstance(eng, str):
            continue
        eng.reset(np.zeros_like(robot.q0))
        V0 = sum(eng.energy())
        eng.reset(robot.q0)
        dV[label] = sum(eng.energy()) - V0
    return max(abs(x - dV['ros_vi']) for x in dV.values())


def call_floor(robot, calls, block=100):
    """(µs per ``mvi.step`` call, µs per direct call of the compiled kernel
    (``step_packed(I, F, W)``, or ``step_constrained_packed(I, F, W, CI, CF, CW)`` with
    constraints), Newton iterations per call of each) on two identical compiled integrators,
    medians over interleaved blocks; None if the robot does not run compiled, a sentence if
    another compiled stepper than ``fast_step.FastStepper`` runs it."""
    from ros_vi.integrators import packed
    from ros_vi.integrators.fast_step import FastStepper
    a, b = RosVI(robot), RosVI(robot)
    if not a.mvi.compiled:
        return None
    a.reset(robot.q0)
    b.reset(robot.q0)
    fast = b.mvi.stepper
    if type(fast) is not FastStepper:
        return 'compiled by another stepper (%s)' % type(fast).__name__
    fast.step(0.0, DT, TOLERANCE, 200)          # fills F and the step constants in W, I
    kernel, args = fast.packed_call()           # the kernel on the stepper's own arrays
    I, W = args[0], args[2]
    T2, ITERS, STATUS = packed.T2, packed.ITERS, packed.STATUS
    a.run_block(block)                          # warm-up: the first calls are slower
    a.iterations = 0
    t_b = DT
    for _ in range(block):
        t_b += DT
        W[T2] = t_b
        kernel(*args)
    step_times, kernel_times, kernel_iters = [], [], 0
    clock = time.perf_counter
    nblocks = max(1, calls // block)
    for _ in range(nblocks):
        t0 = clock()
        a.run_block(block)
        step_times.append(clock() - t0)
        it = 0
        t0 = clock()
        for _ in range(block):           # what a caller must do: set t2, call, read the count
            t_b += DT
            W[T2] = t_b
            kernel(*args)
            it += I[ITERS]
        kernel_times.append(clock() - t0)
        if I[STATUS] != packed.OK:
            raise RuntimeError('direct kernel call failed (status %d)' % I[STATUS])
        kernel_iters += it
    calls = nblocks * block
    return (_median_us(step_times, block), _median_us(kernel_times, block),
            a.iterations / calls, kernel_iters / calls)


def sweep(sizes, steps):
    """``(times, iterations)``: {engine label: [µs per step for each n]} on spatial chains of
    n revolute joints (median over 10 blocks), and ros_vi's Newton iterations per step."""
    block = max(10, steps // 10)
    rows, iterations = {}, []
    for n in sizes:
        robot = urdf_robot('chain%d' % n, R.chain_urdf(n))
        for label, eng in make_engines(robot):
            if label == 'MuJoCo RK4':
                continue
            if isinstance(eng, str):
                rows.setdefault(label, []).append(np.nan)
                continue
            eng.reset(robot.q0)
            eng.run_block(10)
            eng.reset(robot.q0)
            times = []
            for _ in range(max(1, steps // block)):
                t0 = time.perf_counter()
                try:
                    eng.run_block(block)
                except Diverged:
                    break
                times.append(time.perf_counter() - t0)
            rows.setdefault(label, []).append(_median_us(times, block))
            if isinstance(eng, RosVI):
                iterations.append(eng.iterations / max(1, eng.k))
    return rows, iterations


# ---------------------------------------------------------------------- floating robots
# A floating robot in zero gravity, no ground, no contact: the base starts at FLOAT_POSE
# with the twist (FLOAT_V0 [m/s] in the world, FLOAT_W0 [rad/s] in base axes), the joints
# at a random configuration at rest, and every joint is driven by its own sinusoid
# tau_j(t) = A_j sin(w_j t + phi_j) (w_j / 2 pi in 0.5..2 Hz), held over each step at its
# start time, with A_j = m_j w_j^2 FLOAT_SWING, m_j = 1 / (M(q0)^-1)_jj the joint's effective
# inertia (the torque turns both sides of the joint: on a floating robot a light limb's
# M_jj(q0) overstates it up to 30-fold): alone it would swing by FLOAT_SWING [rad] (and drift
# at up to FLOAT_SWING w_j rad/s), so heavy and light joints move alike -- a gentle motion,
# not the whipping of light links that equal fractions of the effort limits (or amplitudes
# scaled by M_jj) give.  The joint torques are internal: the total linear and angular
# momentum must stay what the initial twist gave.
FLOAT_SWING = 0.02
FLOAT_POSE = ((0.1, -0.2, 1.0), (0.3, -0.2, 0.5))   # base xyz [m], URDF rpy [rad]
FLOAT_V0 = (0.3, -0.1, 0.2)
FLOAT_W0 = (0.4, 0.7, -0.5)


class FloatingCase:
    """One floating robot of urdf/ (its benchmark URDF text, moving joints, start state and
    joint torque profile)."""

    def __init__(self, name, seed=0):
        self.name = name
        self.text = R.benchmark_urdf(R.shipped(name))
        self.joints = R.moving_joints(self.text)
        q0 = R.initial_configuration(self.text, seed=seed)
        self.q0 = np.array([q0[n] for n in self.joints])
        rng = np.random.default_rng(seed + 1)
        self.omega = 2 * np.pi * rng.uniform(0.5, 2.0, len(self.joints))
        self.phase = rng.uniform(0, 2 * np.pi, len(self.joints))
        self.rotation = rpy_matrix(FLOAT_POSE[1])
        self.position = np.array(FLOAT_POSE[0], float)
        system = import_urdf(self.text, floating_base=True, gravity=None, enforce_limits=False)
        index = [system.get_config(n).index for n in self.joints]
        q = np.array(system.q, float)
        q[index] = self.q0
        system.q = q
        # effective inertia 1 / (M^-1)_jj [kg m^2] of each joint at q0
        inertia = 1.0 / np.diag(np.linalg.inv(system.mass_matrix()))[index]
        self.amplitude = inertia * self.omega ** 2 * FLOAT_SWING

    def torques(self, t):
        """Joint torques (njoints,) [N m] at time t [s]."""
        return self.amplitude * np.sin(self.omega * t + self.phase)


class FloatingRosVI:
    """ros_vi: ``import_urdf(..., floating_base=True, gravity=None)`` + ``MidpointVI``.

    Momentum: the momentum map of the state (q2, p2) after ``recenter()`` (the chart at
    the base's attitude, angles 0): linear P = p2 of the base translation configs (world
    axes), angular L = x × P + R_ref p_rot about the world origin (p_rot: the rotation
    configs' momenta, the base's angular momentum about its origin in its own axes).  This
    is the quantity the discrete Noether theorem conserves."""

    label = 'ros_vi'

    def __init__(self, case):
        self.case = case
        self.system = s = import_urdf(case.text, floating_base=True, gravity=None,
                                      enforce_limits=False)
        (self.free,) = s.free_joints
        self.trans = np.array([c.index for c in self.free.translation_configs])
        self.rot = np.array([c.index for c in self.free.rotation_configs])
        self.index = np.array([s.get_config(n).index for n in case.joints])
        inputs = {u.name: k for k, u in enumerate(s.inputs)}
        self.u_index = np.array([inputs[n] for n in case.joints])
        self.mvi = MidpointVI(s, tolerance=TOLERANCE)
        self.u = np.zeros(s.nu)
        self.data = s.model.create_data()
        self.k = self.iterations = 0

    def reset(self):
        s, case = self.system, self.case
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = case.rotation, case.position
        self.free.set_pose(pose)                 # angles 0: their rates are omega_body
        q = np.array(s.q, float)
        q[self.index] = case.q0
        dq = np.zeros(s.nQ)
        dq[self.trans], dq[self.rot] = FLOAT_V0, FLOAT_W0
        s.q, s.dq = q, dq
        self.mvi.initialize_from_state(0.0, q, s.mass_matrix() @ dq)
        self.k = self.iterations = 0

    def run_block(self, n):
        step, u, ui, torques = self.mvi.step, self.u, self.u_index, self.case.torques
        it, k0 = 0, self.k
        try:
            for k in range(k0, k0 + n):
                u[ui] = torques(k * DT)
                it += step((k + 1) * DT, u)
        except ConvergenceError as exc:
            raise Diverged(str(exc)) from None
        self.k += n
        self.iterations += it

    def momentum(self):
        """(P (3,) [kg m/s], L (3,) [kg m^2/s] about the world origin, the joint speeds
        (njoints,) [rad/s] of the Legendre transform v = M(q2)^-1 p2)."""
        mvi = self.mvi
        mvi.recenter()
        q, p = mvi.q2, mvi.p2
        P = p[self.trans]
        L = np.cross(q[self.trans], P) + self.free.reference_attitude @ p[self.rot]
        self.data.set(q, np.zeros(self.system.nQ))
        M = dynamics.mass_matrix(self.system.model, self.data)
        return P, L, np.linalg.solve(M, p)[self.index]


class FloatingMuJoCo:
    """MuJoCo: the same URDF through ``MjSpec`` with a free joint added to the root body;
    joint torques through ``qfrc_applied``.  Momentum from ``mj_subtreeVel`` of the root:
    P = subtree mass × COM velocity, L = angular momentum about the COM + c × P (about the
    world origin), at the current state (``mj_forward`` first)."""

    def __init__(self, case, integrator):
        self.case = case
        self.label = 'MuJoCo %s' % integrator
        spec = mujoco.MjSpec.from_string(case.text)
        root = ET.fromstring(case.text)
        children = {j.find('child').get('link') for j in root.findall('joint')}
        (base,) = [l.get('name') for l in root.findall('link')
                   if l.get('name') not in children]
        spec.body(base).add_freejoint()
        model = spec.compile()
        opt = model.opt
        opt.timestep = DT
        opt.gravity[:] = 0.0
        opt.integrator = getattr(mujoco.mjtIntegrator, 'mjINT_' + integrator.upper())
        off = mujoco.mjtDisableBit
        opt.disableflags |= (off.mjDSBL_CONTACT | off.mjDSBL_LIMIT | off.mjDSBL_FRICTIONLOSS
                             | off.mjDSBL_AUTORESET)
        self.m, self.d = model, mujoco.MjData(model)
        self.base = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, base)
        ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in case.joints]
        if min(ids) < 0 or model.nv != len(ids) + 6:
            raise ValueError('MuJoCo model of %s: joints %s, nv %d' % (case.name, ids,
                                                                         model.nv))
        self.qadr, self.vadr = model.jnt_qposadr[ids], model.jnt_dofadr[ids]
        self.k = 0

    def reset(self):
        m, d, case = self.m, self.d, self.case
        mujoco.mj_resetData(m, d)
        d.qpos[:3] = case.position
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, case.rotation.ravel())
        d.qpos[3:7] = quat
        d.qpos[self.qadr] = case.q0
        d.qvel[:3], d.qvel[3:6] = FLOAT_V0, FLOAT_W0      # world linear, body angular
        self.k = 0

    def run_block(self, n):
        m, d, step, torques = self.m, self.d, mujoco.mj_step, self.case.torques
        f, v = d.qfrc_applied, self.vadr
        for _ in range(n):
            f[v] = torques(d.time)
            step(m, d)
        self.k += n
        if (d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number
                or not np.all(np.isfinite(d.qpos))):
            raise Diverged('bad acceleration')

    def momentum(self):
        """(P, L, joint speeds) as :meth:`FloatingRosVI.momentum`."""
        m, d, b = self.m, self.d, self.base
        mujoco.mj_forward(m, d)
        mujoco.mj_subtreeVel(m, d)
        P = m.body_subtreemass[b] * d.subtree_linvel[b]
        L = d.subtree_angmom[b] + np.cross(d.subtree_com[b], P)
        return P.copy(), L.copy(), d.qvel[self.vadr].copy()


def floating_runs(engines, seconds, block):
    """``seconds`` of the floating case on each engine, interleaved block by block (a block
    of ``block`` steps of each engine in turn, so that a slower or faster phase of the
    machine reaches every engine alike): per engine the median µs per step over its blocks
    (each step includes computing the joint torques), the largest relative change of P, L
    (|X(t) - X(0)| / |X(0)|, sampled after every block), the fastest joint speed sampled
    [rad/s], and the start values P0, L0.  Returns one dict per engine."""
    outs = []
    for engine in engines:
        engine.reset()
        engine.run_block(min(block, 20))         # warm-up (compiled kernels, caches)
        engine.reset()
        P0, L0, _ = engine.momentum()
        outs.append(dict(P0=P0, L0=L0, dP=0.0, dL=0.0, speed=0.0, diverged=None,
                         iterations=np.nan, times=[]))
    clock = time.perf_counter
    for _ in range(max(1, int(round(seconds / DT)) // block)):
        for engine, out in zip(engines, outs):
            if out['diverged'] is not None:
                continue
            t0 = clock()
            try:
                engine.run_block(block)
            except Diverged:
                out['diverged'] = engine.k * DT
                continue
            out['times'].append(clock() - t0)
            P, L, speeds = engine.momentum()
            P0, L0 = out['P0'], out['L0']
            out['dP'] = max(out['dP'], float(np.linalg.norm(P - P0) / np.linalg.norm(P0)))
            out['dL'] = max(out['dL'], float(np.linalg.norm(L - L0) / np.linalg.norm(L0)))
            out['speed'] = max(out['speed'], float(np.abs(speeds).max()))
    for engine, out in zip(engines, outs):
        out['us'] = _median_us(out.pop('times'), block)
        if isinstance(engine, FloatingRosVI):
            out['iterations'] = engine.iterations / max(1, engine.k)
    return outs


def recenter_share(case, steps=3000, block=100):
    """(µs per ``mvi.recenter()``, µs per ``mvi.step`` after it) on the floating case: a
    step re-centres the free joint's chart first; calling ``recenter()`` just before it
    separates that cost (the step then finds the chart centred).  Medians over blocks."""
    eng = FloatingRosVI(case)
    eng.reset()
    eng.run_block(block)
    mvi, u, ui, torques = eng.mvi, eng.u, eng.u_index, case.torques
    clock = time.perf_counter
    chart, rest = [], []
    k = eng.k
    for _ in range(steps // block):
        a = b = 0.0
        for _ in range(block):
            u[ui] = torques(k * DT)
            t0 = clock()
            mvi.recenter()
            t1 = clock()
            mvi.step((k + 1) * DT, u)
            b += clock() - t1
            a += t1 - t0
            k += 1
        chart.append(a)
        rest.append(b)
    return _median_us(chart, block), _median_us(rest, block)


def fixed_base_step(case, steps=3000, block=100):
    """(µs per ``mvi.step``, Newton iterations per step) of the same URDF imported with its
    root link welded to the world (no free joint), the same joint torques, from q0 at rest:
    what the free joint adds to a step."""
    s = import_urdf(case.text, gravity=None, enforce_limits=False)
    index = [s.get_config(n).index for n in case.joints]
    inputs = {u.name: k for k, u in enumerate(s.inputs)}
    ui = [inputs[n] for n in case.joints]
    q = np.zeros(s.nQ)
    q[index] = case.q0
    mvi = MidpointVI(s, tolerance=TOLERANCE)
    mvi.initialize_from_state(0.0, q, np.zeros(s.nQd))
    u, clock, times, it = np.zeros(s.nu), time.perf_counter, [], 0
    for b in range(steps // block + 1):
        t0 = clock()
        for k in range(b * block, (b + 1) * block):
            u[ui] = case.torques(k * DT)
            it += mvi.step((k + 1) * DT, u)
        if b:                                   # the first block warms up
            times.append(clock() - t0)
    return _median_us(times, block), it / ((steps // block + 1) * block)


def floating_table(names, seconds, block):
    """Print the floating-robot table (speed and momentum drift)."""
    print('\n## Floating robots: zero gravity, no contact, sinusoidal joint torques '
          '(%g s, dt = 1 ms)\n' % seconds)
    print('| robot | DOF | engine | µs/step | ros_vi / engine | Newton it/step '
          '| max rel. dP | max rel. dL | max joint speed [rad/s] | |P0| [kg m/s] '
          '| |L0| [kg m^2/s] |')
    print('|---|---|---|---|---|---|---|---|---|---|---|')
    notes = []
    for name in names:
        case = FloatingCase(name)
        engines = [FloatingRosVI(case)]
        for integ in ('Euler', 'RK4'):
            engines.append(FloatingMuJoCo(case, integ) if mujoco is not None else None)
        ros_us = start = None
        agreement = []
        present = [eng for eng in engines if eng is not None]
        results = dict(zip(map(id, present), floating_runs(present, seconds, block)))
        for eng in engines:
            if eng is None:
                print('| %s | | MuJoCo | not installed | | | | | | | |' % name)
                continue
            r = results[id(eng)]
            print('  %s / %s: %.1f us/step, dP %.1e, dL %.1e' % (name, eng.label, r['us'],
                                                               r['dP'], r['dL']),
                  file=sys.stderr, flush=True)
            if ros_us is None:
                ros_us, start = r['us'], (r['P0'], r['L0'])
            else:           # the same initial state: the same momenta (a model check)
                agreement.append('%s: |dP0| %.1e kg m/s, |dL0| %.1e kg m^2/s' % (
                    eng.label, np.linalg.norm(r['P0'] - start[0]),
                    np.linalg.norm(r['L0'] - start[1])))
            drift = ('%.1e' % r['dP'], '%.1e' % r['dL'], '%.0f' % r['speed'])
            if r['diverged'] is not None:
                drift = ('diverged at t = %.2f s' % r['diverged'], '-', '-')
            print('| %s | 6 + %d | %s%s | %.1f | %s | %s | %s | %s | %s | %.4g | %.4g |' % (
                name, len(case.joints), eng.label,
                ' (compiled)' if getattr(eng, 'mvi', None) is not None and eng.mvi.compiled
                else '', r['us'], '-' if eng is engines[0] else '%.2f' % (ros_us / r['us']),
                _fmt(r['iterations'], '%.2f'), drift[0], drift[1], drift[2],
                np.linalg.norm(r['P0']), np.linalg.norm(r['L0'])))
        notes.append('%s: initial momenta against ros_vi: %s' % (name, '; '.join(agreement)))
    print()
    for note in notes:
        print(note)
    for name in names:
        chart, rest = recenter_share(FloatingCase(name))
        fixed, iters = fixed_base_step(FloatingCase(name))
        print('%s: ros_vi step = %.1f µs re-centring the chart (mvi.recenter(), Python + '
              'kernel) + %.1f µs the rest of the step; the same robot welded to the world '
              '(no free joint): %.1f µs per step (%.2f Newton it/step)'
              % (name, chart, rest, fixed, iters))


# ---------------------------------------------------------------------- output
def _fmt(x, spec='%.3g'):
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return '-'
    return spec % x


def _dof(robot):
    n_ind, n_full = len(robot.independent), len(robot.joints)
    dof = '%d' % n_ind if n_ind == n_full else '%d (+%d mimic)' % (n_ind, n_full - n_ind)
    if robot.closed:
        dof = '1 (3 joints, loop)'
    return dof


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--seconds', type=float, default=10.0,
                    help='simulated time per robot and engine [s] (default 10)')
    ap.add_argument('--block', type=int, default=100,
                    help='steps per timed block (timing = median over blocks)')
    names = [r.name for r in all_robots()]
    ap.add_argument('--robots', nargs='*', default=names, choices=names,
                    help='fixed-base robots (none: skip them)')
    ap.add_argument('--configs', type=int, default=3,
                    help='random configurations for the mass-matrix check')
    ap.add_argument('--floor-calls', type=int, default=3000,
                    help='calls per variant for the Python call floor')
    ap.add_argument('--sweep', type=int, nargs='+', default=[2, 4, 8, 16, 32, 64],
                    help='chain sizes (joints) for the cost growth')
    ap.add_argument('--sweep-steps', type=int, default=500)
    ap.add_argument('--no-sweep', action='store_true')
    ap.add_argument('--floating', nargs='*', default=list(R.FLOATING), choices=R.FLOATING,
                    help='floating robots for the momentum table (none: skip it)')
    args = ap.parse_args(argv)

    if mujoco is not None:
        # count MuJoCo's warnings (solver line search, instabilities) instead of printing each
        def count(msg):
            key = re.sub(r'\d+(\.\d+)?', '#', msg.strip())
            MJ_WARNINGS[key] = MJ_WARNINGS.get(key, 0) + 1
        mujoco.set_mju_user_warning(count)
    print('# ros_vi vs MuJoCo vs Pinocchio')
    print('dt = %g s, %g s simulated per run, gravity %s, no contacts/limits/damping; '
          'MuJoCo %s, Pinocchio %s' % (DT, args.seconds, R.GRAVITY,
                                       mujoco.__version__ if mujoco else 'not installed',
                                       pin.__version__ if pin else 'not installed'))
    robots = [r for r in all_robots() if r.name in args.robots]
    summary, results = [], []
    for robot in robots:
        engines = make_engines(robot)
        dev, scale = mass_matrix_check(robot, engines, args.configs)
        spread = potential_check(robot, engines)
        res = {}
        for label, eng in engines:
            if isinstance(eng, str):
                res[label] = eng
                continue
            try:
                res[label] = simulate(eng, robot, args.seconds, args.block)
            except Exception as exc:        # report it in the table, go on with the others
                res[label] = 'error: %s: %s' % (type(exc).__name__, str(exc).splitlines()[0])
            r = res[label]
            print('  %s / %s: %s' % (robot.name, label, r if isinstance(r, str) else
                                     '%.1f us/step, dE %.2e J%s' % (
                                         r['us'], r['dE_end'],
                                         '' if r['diverged'] is None else
                                         ', diverged at %.2f s' % r['diverged'])),
                  file=sys.stderr, flush=True)
        summary.append((robot, dev, scale, spread, engines))
        results.append((robot, res, engines))

    print('\n## Models and agreement\n')
    print('| robot | DOF | ros_vi form (compiled) | max abs dM: MuJoCo | Pinocchio '
          '| other ros_vi form | max abs M | max abs d(dV) [J] | baselines |')
    print('|---|---|---|---|---|---|---|---|---|')
    for robot, dev, scale, spread, engines in summary:
        forms = ', '.join('%s (%s)' % (e.note or 'tree' if not robot.closed else 'loop '
                                       'constraint', e.mvi.compiled)
                          for lab, e in engines if isinstance(e, RosVI))
        other = [lab for lab, e in engines[1:] if isinstance(e, RosVI)]
        baselines = '; '.join('%s: %s' % (lab, e.note) for lab, e in engines
                              if lab in ('MuJoCo Euler', 'Pinocchio') and not
                              isinstance(e, str) and e.note)
        print('| %s | %s | %s | %s | %s | %s | %.3g | %.1e | %s |' % (
            robot.name, _dof(robot), forms, _fmt(dev.get('MuJoCo Euler'), '%.1e'),
            _fmt(dev.get('Pinocchio'), '%.1e'),
            _fmt(dev.get(other[0]), '%.1e') if other else '-', scale, spread, baselines))

    print('\n## Speed and energy (%g s from rest, dt = 1 ms)\n' % args.seconds)
    print('| robot | engine | µs/step | steps/s | ros_vi / engine | Newton it/step '
          '| abs dE at end [J] | max abs dE [J] | max T [J] | max violation |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    for robot, res, engines in results:
        ros_us = res['ros_vi']['us'] if isinstance(res['ros_vi'], dict) else np.nan
        for label, eng in engines:
            r = res[label]
            if isinstance(r, str):
                print('| %s | %s | %s | | | | | | | |' % (robot.name, label, r))
                continue
            energy = (_fmt(r['dE_end'], '%.2e'), _fmt(r['dE_max'], '%.2e'))
            if r['diverged'] is not None:
                energy = ('diverged at t = %.2f s' % r['diverged'], '-')
            ratio = '-' if label == 'ros_vi' else _fmt(ros_us / r['us'], '%.2f')
            iters = (_fmt(eng.iterations / max(1, eng.k), '%.2f') if isinstance(eng, RosVI)
                     else '-')
            viol = '-'
            if robot.closed or robot.mimics:
                viol = 'exact' if eng.exact_mimic else _fmt(r['violation'], '%.1e')
            print('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
                robot.name, label, _fmt(r['us'], '%.1f'), _fmt(1e6 / r['us'], '%.0f'),
                ratio, iters, energy[0], energy[1], _fmt(r['T_max'], '%.3g'), viol))

    print('\n## Python call floor of MidpointVI.step (compiled robots)\n')
    print('| robot | mvi.step µs | step_packed(I, F, W) µs | Python floor µs '
          '| Newton it/step (step, kernel) |')
    print('|---|---|---|---|---|')
    for robot in robots:
        floor = call_floor(robot, args.floor_calls)
        if floor is None or isinstance(floor, str):
            print('| %s | %s | | | |' % (robot.name, floor or 'general path (not compiled)'))
        else:
            print('| %s | %.2f | %.2f | %.2f | %.2f, %.2f |' % (
                robot.name, floor[0], floor[1], floor[0] - floor[1], floor[2], floor[3]))

    if not args.no_sweep:
        sizes = args.sweep
        rows, iterations = sweep(sizes, args.sweep_steps)
        print('\n## Cost growth on spatial chains of n revolute joints (µs/step)\n')
        labels = list(rows)
        print('| n | %s | ros_vi Newton it/step |' % ' | '.join(labels))
        print('|---|%s---|' % ('---|' * len(labels)))
        for i, n in enumerate(sizes):
            print('| %d | %s | %.2f |' % (n, ' | '.join(_fmt(rows[l][i], '%.1f') for l in labels),
                                         iterations[i]))
        fits = []
        for l in labels:
            t = np.array(rows[l])
            for lo in sorted({min(sizes), 8}):
                sel = [(n, x) for n, x in zip(sizes, t) if n >= lo and np.isfinite(x)]
                if len(sel) >= 2:
                    slope = np.polyfit(np.log([s[0] for s in sel]), np.log([s[1] for s in sel]),
                                       1)[0]
                    fits.append('%s n>=%d: %.2f' % (l, lo, slope))
        print('\nfitted exponent (time ~ n^k): ' + '; '.join(fits))

    if args.floating:
        floating_table(args.floating, args.seconds, args.block)

    if MJ_WARNINGS:
        print('\nMuJoCo warnings (numbers replaced by #): '
              + '; '.join('%r x %d' % (m, n) for m, n in MJ_WARNINGS.items()))
    print(LEGEND % dict(configs=args.configs, block=args.block))
    return 0


if __name__ == '__main__':
    sys.exit(main())
