"""Batched rollouts: B closed-loop simulations of one model at once (``ros_vi.rollout``).

Two paths, one answer:

* **compiled** (the default whenever possible): the model packs into the compiled step
  (built-in potentials and forces, no constraints, no kinematic configs) and the controller
  is None or a shipped law with a compiled form (:mod:`ros_vi.control.compiled`).  All copies
  run in one numba call, parallel over the cores (:mod:`ros_vi.batch.loop`).
* **general**: anything else -- a Python callable as controller, a controller class
  without a compiled law, a model with constraints or custom forces -- runs copy after
  copy on :class:`~ros_vi.integrators.MidpointVI` with the controller called from
  Python.  A copy whose compiled step fails after the momentum retry is re-run here too,
  where the integrator can also subdivide the step.

Both follow the tick of :func:`ros_vi.simulation.simulate` (the loop the simulator node
runs): sample ``(q_k, v_k = M(q_k)^-1 p_k)``, controller, clip, one VI step; so a rollout copy,
an independent MidpointVI run and the ROS loop give the same trajectory.

Example
-------
>>> import numpy as np, ros_vi
>>> from ros_vi.control.presets import DEMOS
>>> demo = DEMOS['pendulum']
>>> plant = demo.model()
>>> controller = demo.controller(demo.model(), dt=0.001)
>>> q0 = np.linspace(-1, 1, 8)[:, None]
>>> result = ros_vi.rollout(plant, q0, np.zeros((8, 1)), controller, 5.0, 0.001,
...                         target=ros_vi.Target(goal=[np.pi], q_tol=0.05, v_tol=0.1))
>>> result.time_to_target.shape
(8,)
"""
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..control import compiled as laws
from ..control.base import Controller, angle_mask, default_effort_limits
from ..integrators import ConvergenceError, MidpointVI
from ..integrators.midpointvi import joint_limit_arrays
from ..integrators.fast_step import FastStepper
from ..integrators.packed import MINIT
from ..mechanics import dynamics
from ..mechanics.inputs import config_efforts, input_configs
from . import loop, parameters

__all__ = ['Target', 'RolloutResult', 'rollout']


@dataclass
class Target:
    """A target set: ``|q_i - goal_i| < q_tol_i`` (angles wrapped) and ``|v_i| < v_tol_i``
    for the ``configs`` (names or indices; default all).  ``goal (nQ,)`` [rad or m];
    tolerances scalars or one per selected config.  ``time_to_target`` is the first sample
    time after which every later sample is inside (nan if the last one is outside), the
    rule of :func:`ros_vi.simulation.settle_time`."""
    goal: object
    q_tol: object = 0.05
    v_tol: object = 0.1
    configs: object = None

    def arrays(self, system):
        """(goal (nQ,), q_tol (nQ,), v_tol (nQ,)); q_tol is -1 for configs not checked."""
        n = system.nQ
        goal = np.asarray(self.goal, dtype=float).reshape(-1)
        if goal.shape != (n,) or not np.all(np.isfinite(goal)):
            raise ValueError('target goal: expected %d finite values (configs %s), got %s'
                             % (n, [c.name for c in system.configs], self.goal))
        if self.configs is None:
            sel = np.arange(n)
        else:
            sel = np.array([system.get_config(c).index for c in self.configs], dtype=int)
        qt = np.full(n, -1.0)
        vt = np.full(n, np.inf)
        qt[sel] = np.broadcast_to(np.asarray(self.q_tol, dtype=float), sel.shape)
        vt[sel] = np.broadcast_to(np.asarray(self.v_tol, dtype=float), sel.shape)
        if np.any(qt[sel] <= 0) or np.any(vt[sel] <= 0):
            raise ValueError('target tolerances must be > 0, got q_tol=%s, v_tol=%s'
                             % (self.q_tol, self.v_tol))
        return goal, qt, vt


@dataclass
class RolloutResult:
    """What :func:`rollout` returns (B copies, nQ configs, nu inputs).

    Per copy: ``ok (B,)`` bool (the run reached ``duration``); ``error`` list of str or None
    (why a copy stopped); ``t_end (B,)`` [s] time of its last state; ``q, v (B, nQ)``,
    ``p (B, nQd)`` that last state; ``time_to_target (B,)`` [s] (nan: not settled, or no
    target); ``max_effort (B, nu)`` largest |applied effort| [N m or N]; ``energy (B,)``
    [J] at t_end; ``energy_error (B,)`` [J] largest |E - E0 - W| over the samples, W the
    discrete work of inputs, damping and drives (for an exact VI with these forces it stays
    small and bounded); ``iterations (B,)`` Newton iterations; ``balancing (B,)`` bool, the
    hand-over's final mode; ``path (B,)`` 'compiled' or 'general'.

    With ``record_every = r > 0``: ``t (S,)`` sample times (every r ticks), ``q_traj,
    v_traj (B, S, nQ)``, ``u_traj (B, S, nu)`` the efforts applied from each sample on
    (nan where a copy had stopped).  ``wall_time`` [s] of the call.
    """
    ok: np.ndarray
    error: list
    t_end: np.ndarray
    q: np.ndarray
    v: np.ndarray
    p: np.ndarray
    time_to_target: np.ndarray
    max_effort: np.ndarray
    energy: np.ndarray
    energy_error: np.ndarray
    iterations: np.ndarray
    balancing: np.ndarray
    path: np.ndarray
    t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    q_traj: np.ndarray = None
    v_traj: np.ndarray = None
    u_traj: np.ndarray = None
    wall_time: float = math.nan


def _states(q0, dq0, system):
    q0 = np.asarray(q0, dtype=float)
    dq0 = np.asarray(dq0, dtype=float)
    n = system.nQ
    if q0.ndim == 1:
        q0 = q0[:, None] if n == 1 else q0[None, :]
    if dq0.ndim == 1:
        dq0 = dq0[:, None] if n == 1 else dq0[None, :]
    if q0.ndim != 2 or q0.shape[1] != n:
        raise ValueError('q0: expected shape (B, %d) (configs %s), got %s'
                         % (n, [c.name for c in system.configs], q0.shape))
    if dq0.shape != q0.shape:
        raise ValueError('dq0: expected shape %s like q0, got %s' % (q0.shape, dq0.shape))
    if q0.shape[0] == 0:
        raise ValueError('q0: empty batch (B = 0)')
    for name, arr in (('q0', q0), ('dq0', dq0)):
        bad = ~np.isfinite(arr)
        if bad.any():
            raise ValueError('%s is not finite for copies %s'
                             % (name, np.nonzero(bad.any(axis=1))[0][:10].tolist()))
    return np.ascontiguousarray(q0), np.ascontiguousarray(dq0)


def _controllers(controller, batch):
    """(list of B controllers or None, callable or None)."""
    if controller is None:
        return None, None
    if isinstance(controller, (list, tuple)):
        if len(controller) != batch:
            raise ValueError('controller: a list needs one controller per copy (%d), got %d'
                             % (batch, len(controller)))
        if not all(isinstance(c, Controller) for c in controller):
            raise ValueError('controller: a list must hold ros_vi.control Controller objects')
        return list(controller), None
    if isinstance(controller, Controller):
        return [controller] * batch, None
    if callable(controller):
        return None, controller
    raise ValueError('controller must be None, a ros_vi.control Controller, a list of them '
                     'or a callable f(t, q, v) -> u (nu,), got %r' % (controller,))


def _packed(system):
    """The FastStepper of ``system`` when the compiled loop can run it, else None."""
    if system.nQk or system.nc or system.free_joints:
        # free joints move their charts between steps (MidpointVI.recenter): general path
        return None
    # a root past a joint limit stops a copy's compiled loop: the general path holds it
    return FastStepper.for_system(system, joint_limit_arrays(system))


def rollout(system, q0, dq0, controller=None, duration=1.0, dt=0.001, params=None, *,
            target=None, record_every=0, t0=0.0, threads=None, tolerance=1e-10,
            max_iterations=200, compiled=True, min_iterations=1):
    """Run B copies of ``system`` from ``q0[b], dq0[b]`` for ``duration`` [s] in ticks of
    ``dt`` [s] under ``controller``; returns a :class:`RolloutResult`.

    Parameters
    ----------
    system : System, the plant (its configs in order; not a controller's own system)
    q0, dq0 : (B, nQ) initial positions [rad, m] and velocities [rad/s, m/s]
    controller : None (no input), a :class:`ros_vi.control.Controller` (every copy; each
        copy starts from ``reset()``), a list of B Controllers (per-copy gains), or any
        callable ``f(t, q, v) -> u`` (nu,) [N m, N] (general path).  Controllers see
        ``(q, v)`` each tick and their outputs are clipped at their ``u_max``.
    duration, dt : [s]; ``round(duration / dt)`` ticks
    params : {name: scalar or (B,)}, the per-copy parameters of
        :mod:`ros_vi.batch.parameters` (masses, damping, gravity, effort limits, delay)
    target : :class:`Target` or None, for ``time_to_target``
    record_every : 0 (reductions only) or r > 0 to keep every r-th sample
    threads : cores for the compiled path (default: numba's, all of them)
    tolerance, max_iterations, min_iterations : the VI root solve's (as
        :class:`MidpointVI`; at least one Newton update a step, as the simulator's tick)
    compiled : False forces the general path (for comparisons)

    A copy that fails (no acceptable root even with subdivided steps, a controller raising
    or returning non-finite efforts) is reported in ``ok``/``error`` and the others run on.
    Bad arguments (shapes, unknown parameters, negative durations) raise ValueError naming
    them.
    """
    start = time.perf_counter()
    duration, dt, t0 = float(duration), float(dt), float(t0)
    if not (math.isfinite(duration) and duration > 0):
        raise ValueError('duration must be finite and > 0, got %r' % duration)
    if not (math.isfinite(dt) and dt > 0):
        raise ValueError('dt must be finite and > 0, got %r' % dt)
    record_every = int(record_every)
    if record_every < 0:
        raise ValueError('record_every must be >= 0, got %r' % record_every)
    if system.nQk:
        raise ValueError('rollout: the system has kinematic configs %s; give it a system '
                         'without them' % [c.name for c in system.kin_configs])
    q0, dq0 = _states(q0, dq0, system)
    B, n, nd, nu = q0.shape[0], system.nQ, system.nQd, system.nu
    nsteps = int(round(duration / dt))
    table = parameters.check_parameters(system, params, B)
    controllers, callback = _controllers(controller, B)
    if controllers is not None:
        names = [c.name for c in system.configs]
        for c in {id(c): c for c in controllers}.values():
            if c.joint_names != names:
                raise ValueError('controller joints %s differ from the plant configs %s'
                                 % (c.joint_names, names))
            if c.system is system:
                raise ValueError('give the plant its own System: the controller uses its '
                                 'system as scratch space')
            if abs(c.dt - dt) > 1e-12 * dt:
                # an LQR's gains and an equilibrium's momentum belong to its design step
                raise ValueError('controller %s is designed for dt = %g s, the rollout steps '
                                 'dt = %g s: design it with dt=%g'
                                 % (type(c).__name__, c.dt, dt, dt))
        input_names = list(controllers[0].input_names)
        in_idx = np.array([system.get_input(name).index for name in input_names],
                          dtype=np.int64)
        base = np.full(nu, np.inf)
        limits, delay = parameters.loop_values(system, table, B, dt, base)
        for b, c in enumerate(controllers):
            lim = limits[b]
            for j, name in zip(in_idx, input_names):
                key = 'effort_limit.' + system.inputs[j].name
                if key not in table:
                    lim[j] = c.u_max[input_names.index(name)]
    else:
        in_idx = np.zeros(0, dtype=np.int64)
        limits, delay = parameters.loop_values(system, table, B, dt,
                                               default_effort_limits(system))
    goal_q, goal_tol, goal_vtol = (target.arrays(system) if target is not None else
                                   (np.zeros(n), np.full(n, -1.0), np.full(n, np.inf)))
    angles = angle_mask(system)

    # one packed plant per distinct set of model parameters
    keys = [parameters.model_key(table, b) for b in range(B)]
    samples = nsteps // record_every + 1 if record_every else 0
    out = _Outputs(B, n, nd, nu, samples)
    path = np.array(['general'] * B, dtype=object)

    stepper = _packed(system) if compiled and callback is None else None
    packed_law = None
    if stepper is not None and controllers is not None:
        packed_law = _pack_law(controllers, stepper)
        if packed_law is None:
            stepper = None
    if stepper is not None:
        Ftab, plant_rows = [], {}
        for key in keys:
            if key not in plant_rows:
                with parameters.applied(system, key):
                    plant_rows[key] = len(Ftab)
                    Ftab.append(stepper.packed_constants())
        plant_row = np.array([plant_rows[k] for k in keys], dtype=np.int64)
        ctrl_row = plant_row.copy()
        if controllers is not None:
            own = {}
            for b, c in enumerate(controllers):
                if id(c.system) not in own:
                    st = _packed(c.system)
                    if st is None or not np.array_equal(st.packed_structure(),
                                                        stepper.packed_structure()):
                        raise ValueError('the controller model differs in structure from the '
                                         'plant (frames, configs, forces)')
                    constants = st.packed_constants()
                    # a controller whose model equals the plant's (the usual case) shares its
                    # row: the loop then reuses the plant's node terms (M, v, energy)
                    # instead of evaluating the kernel a second time
                    same = [r for r, F in enumerate(Ftab) if np.array_equal(F, constants)]
                    if same:
                        own[id(c.system)] = same[0]
                    else:
                        own[id(c.system)] = len(Ftab)
                        Ftab.append(constants)
                ctrl_row[b] = own[id(c.system)]
        law_ints, law_table, law_row = packed_law if packed_law is not None else (
            np.zeros(0, dtype=np.int64), np.zeros((1, 1)), np.zeros(B, dtype=np.int64))
        _run_compiled(stepper, np.array(Ftab), plant_row, ctrl_row, q0, dq0, t0, dt, nsteps,
                      tolerance, (max_iterations, min_iterations), law_ints, law_table, law_row, in_idx,
                      limits, delay, goal_q, goal_tol, goal_vtol, angles, target is not None,
                      record_every, out, threads)
        path[:] = 'compiled'
        redo = np.nonzero(out.status != loop.DONE)[0]
    else:
        redo = np.arange(B)
    if len(redo):
        # the general path steps the System itself: its own state is put back afterwards
        saved = (system.q.copy(), system.dq.copy(), system.u.copy(), system.t)
        try:
            for b in redo:
                _general_copy(b, system, controllers, callback, keys[b], in_idx, limits[b],
                              int(delay[b]), q0[b], dq0[b], t0, dt, nsteps, tolerance,
                              (max_iterations, min_iterations), goal_q, goal_tol, goal_vtol, angles,
                              target is not None, record_every, out)
                path[b] = 'general'
        finally:
            system.set_state(q=saved[0], dq=saved[1], u=saved[2], t=saved[3])
    result = out.result(t0, dt, path, target is not None)
    result.wall_time = time.perf_counter() - start
    return result


def _pack_law(controllers, stepper):
    unique = list({id(c): c for c in controllers}.values())
    damping = []
    for c in unique:
        st = _packed(c.system)
        if st is None:
            return None
        damping.append(st.damping())
    packed = laws.pack_controllers(unique, damping)
    if packed is None:
        return None
    law_ints, table = packed
    index = {id(c): i for i, c in enumerate(unique)}
    return law_ints, table, np.array([index[id(c)] for c in controllers], dtype=np.int64)


class _Outputs:
    """The per-copy output arrays both paths write into."""

    def __init__(self, B, n, nd, nu, samples):
        self.acc = np.zeros((B, loop.NACC))
        self.max_u = np.zeros((B, nu))
        self.status = np.zeros(B, dtype=np.int64)
        self.q = np.zeros((B, n))
        self.p = np.zeros((B, nd))
        self.v = np.zeros((B, nd))
        self.fail_tick = np.zeros(B, dtype=np.int64)
        self.error = [None] * B
        self.rec_q = np.full((B, samples, n), np.nan)
        self.rec_v = np.full((B, samples, nd), np.nan)
        self.rec_u = np.full((B, samples, nu), np.nan)
        self.rec_t = np.zeros(samples)

    def result(self, t0, dt, path, has_target):
        ok = self.status == loop.DONE
        acc = self.acc
        ttt = acc[:, loop.A_ENTER].copy()
        if not has_target:
            ttt[:] = np.nan
        ttt[~ok] = np.nan
        samples = self.rec_t.shape[0]
        return RolloutResult(
            ok=ok, error=list(self.error), t_end=t0 + self.fail_tick * dt, q=self.q,
            v=self.v, p=self.p, time_to_target=ttt, max_effort=self.max_u,
            energy=acc[:, loop.A_E].copy(), energy_error=acc[:, loop.A_EERR].copy(),
            iterations=acc[:, loop.A_ITERS].astype(np.int64),
            balancing=acc[:, loop.A_BALANCING] != 0, path=path.astype(str),
            t=self.rec_t if samples else np.zeros(0),
            q_traj=self.rec_q if samples else None, v_traj=self.rec_v if samples else None,
            u_traj=self.rec_u if samples else None)


def _run_compiled(stepper, Ftab, plant_row, ctrl_row, q0, dq0, t0, dt, nsteps, tol, iterations,
                  law_ints, law_table, law_row, in_idx, limits, delay, goal_q, goal_tol,
                  goal_vtol, angles, has_target, record_every, out, threads):
    import numba
    previous = numba.get_num_threads()
    wanted = previous if threads is None else int(threads)
    # no more threads than copies: an idle thread of the pool spin-waits, which made a
    # single copy on two threads 10x slower
    numba.set_num_threads(max(1, min(wanted, numba.config.NUMBA_NUM_THREADS, q0.shape[0])))
    max_iter, min_iter = iterations
    structure = stepper.packed_structure()
    structure[MINIT] = min_iter
    try:
        loop.run_batch(structure, stepper.new_work(), Ftab, plant_row,
                       ctrl_row, q0, np.ascontiguousarray(dq0[:, :stepper.nd]), t0, dt,
                       nsteps, tol, max_iter, law_ints, law_table, law_row, in_idx,
                       np.ascontiguousarray(limits), delay, out.acc, out.max_u, out.status,
                       out.q, out.p, out.v, out.fail_tick, goal_q, goal_tol, goal_vtol,
                       angles, has_target, record_every, out.rec_q, out.rec_v, out.rec_u,
                       out.rec_t)
    finally:
        numba.set_num_threads(previous)


def _general_copy(b, system, controllers, callback, key, in_idx, limits, delay, q0, v0, t0,
                  dt, nsteps, tol, iterations, goal_q, goal_tol, goal_vtol, angles,
                  has_target, record_every, out):
    """Copy b on the general path with its controller and model parameters."""
    controller, law = None, None
    if callback is not None:
        law = lambda t, q, v, efforts: callback(t, q, v)                  # noqa: E731
    if controllers is not None:
        controller = controllers[b]
        controller.reset()
        # the published state, efforts included (as the simulator's tick hands it over)
        law = lambda t, q, v, efforts: controller.compute(q, v, efforts).u    # noqa: E731
    with parameters.applied(system, key):
        _run_general(b, system, law, in_idx, callback is not None, limits, delay, q0, v0,
                     t0, dt, nsteps, tol, iterations, goal_q, goal_tol, goal_vtol, angles,
                     has_target, record_every, out, controller)


def _run_general(b, plant, law, in_idx, full_input, limits, delay, q0, v0, t0, dt, nsteps,
                 tol, iterations, goal_q, goal_tol, goal_vtol, angles, has_target,
                 record_every, out, controller):
    """Copy b on MidpointVI with the controller called from Python (the module docstring);
    the reductions are the compiled loop's own (:func:`loop.observe`)."""
    nd, nu = plant.nQd, plant.nu
    model = plant.model
    data = model.create_data()
    max_iter, min_iter = iterations
    mvi = MidpointVI(plant, tolerance=tol, min_iterations=min_iter)
    data.set(q0, np.zeros(plant.nQ))
    p0 = dynamics.momentum_from_velocity(model, data, v0)
    mvi.initialize_from_state(t0, q0, p0)
    acc, max_u = out.acc[b], out.max_u[b]
    acc[loop.A_ENTER] = math.nan
    acc[loop.A_ITERS] = 0.0
    configs = input_configs(plant)
    efforts = np.zeros(plant.nQ)         # applied over the tick before the first: none
    ring = np.zeros((delay + 1, nu))
    out.status[b] = loop.RUNNING
    k = 0
    for k in range(nsteps + 1):
        t = t0 + k * dt
        q, p = mvi.q2.copy(), mvi.p2_end       # the simulator's published state
        data.set(q, np.zeros(plant.nQ))
        v = dynamics.velocity_from_momentum(model, data, p, mvi.held_configs)
        data.set(q, v)
        with plant.evaluate_at(data):
            T = plant.kinetic_energy()
            V = plant.potential_energy()
        loop.observe(k, t, q, v, T, V, acc, goal_q, goal_tol, goal_vtol, angles, has_target,
                      record_every, out.rec_q, out.rec_v, out.rec_t, b)
        acc[loop.A_TICKS] = k
        if k == nsteps:
            out.status[b] = loop.DONE
            break
        u = np.zeros(nu)
        if law is not None:
            try:
                value = np.asarray(law(t, q, v, efforts), dtype=float).reshape(-1)
            except Exception as exc:       # a user's controller: report, do not stop others
                out.error[b] = 'controller raised at t = %.6g s: %s: %s' % (
                    t, type(exc).__name__, exc)
                break
            size = nu if full_input else in_idx.shape[0]
            if value.shape != (size,) or not np.all(np.isfinite(value)):
                out.error[b] = ('controller returned %s at t = %.6g s; expected %d finite '
                                'efforts' % (np.array2string(value, precision=4), t, size))
                break
            if full_input:
                u = value
            else:
                u[in_idx] = value
        ring[k % (delay + 1)] = u
        applied = ring[(k + 1) % (delay + 1)] if k >= delay else np.zeros(nu)
        applied = np.minimum(np.maximum(applied, -limits), limits)
        efforts = config_efforts(plant, applied, configs)    # what the next state carries
        np.maximum(max_u, np.abs(applied), out=max_u)
        if record_every and k % record_every == 0:
            out.rec_u[b, k // record_every] = applied
        try:
            acc[loop.A_ITERS] += mvi.step(t0 + (k + 1) * dt, applied,
                                          max_iterations=max_iter)
        except (ConvergenceError, ValueError) as exc:
            out.error[b] = 'step %d (t = %.6g s): %s' % (k, t, exc)
            break
        rate = (mvi.q2 - mvi.q1)[:nd] / dt
        acc[loop.A_WORK] += dt * sum(float(f.f_array()[:nd] @ rate) for f in plant.forces)
    if controller is not None and hasattr(controller, 'balancing'):
        acc[loop.A_BALANCING] = 1.0 if controller.balancing else 0.0
    out.fail_tick[b] = k
    out.q[b], out.p[b], out.v[b] = mvi.q2, mvi.p2, v
    if out.status[b] != loop.DONE:
        out.status[b] = loop.FAILED
