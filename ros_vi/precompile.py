"""Compile (and cache on disk) every numba kernel ros_vi uses, so no later process pays it.

numba compiles a kernel on its first call (about 2.5 minutes for all of ros_vi's on a 2-core
machine, 1.5 of them the batched rollout loop) and caches the machine code in the user's
cache folder (:mod:`ros_vi.kernel_cache`); later processes load it in well under a second.
``scripts/setup_env.sh`` runs this once after installing, so tests, the demo and ROS nodes
start warm; a ROS install runs it once after ``colcon build`` (a node started with a cold
cache compiles what it needs before it joins the graph, and says so).

    python -m ros_vi.precompile
"""
import time

import numpy as np

#: the modules whose cached kernels mean a warm start (ros_vi.kernel_cache.is_cached)
STEP_MODULES = ('ros_vi.mechanics.kernel', 'ros_vi.integrators.fast_step')


def is_warm():
    """True when the kernels a simulator or controller needs are in the cache."""
    import importlib
    from .kernel_cache import is_cached
    return all(is_cached(importlib.import_module(m)) for m in STEP_MODULES)


def precompile(batch=True):
    """Run each kernel once, for float and complex inputs; returns the seconds it took.
    ``batch=False`` leaves out the batched rollouts' parallel loop (most of the time: a
    node does not need it)."""
    start = time.perf_counter()
    import ros_vi as trep
    from ros_vi import rx, ry, tz
    system = trep.System()
    system.import_frames([rx('a', mass=[1.0, 0.1, 0.1, 0.1]), [
        tz(-1.0), [ry('b', mass=[1.0, 0.1, 0.1, 0.1]), [tz('k', kinematic=True)]]]])
    trep.potentials.Gravity(system)
    trep.potentials.ConfigSpring(system, 'a', 1.0)
    trep.forces.Damping(system, 0.1)
    trep.forces.ConfigForce(system, 'a', 'u')
    for fast in (True, False):
        mvi = trep.MidpointVI(system, fast=fast)
        mvi.initialize_from_state(0.0, [0.1, 0.2, 0.0], [0.0, 0.0])
        for k in range(1, 6):
            mvi.step(0.01 * k, [0.1], [0.0])
        mvi.q2_dq1()
        mvi.q2_dq1dq1()
    # the compiled constrained step (and the constraint kernel)
    system.q = [0.3, -0.2, 0.1]
    tip = system.frames[-1]
    trep.constraints.Distance(system, 'World', tip, float(np.linalg.norm(tip.p()[:3])))
    mvi = trep.MidpointVI(system)
    mvi.initialize_from_state(0.0, system.q, [0.0, 0.0])
    for k in range(1, 6):
        mvi.step(0.01 * k, [0.1], [0.1])
    system.q = [0.3, -0.2, 0.1]
    system.dq = [0.1, 0.2, 0.0]
    system.f_dq()            # complex-step kernels
    system.L_dqdqdq(0, 0, 0)
    # a free joint: the compiled change of chart, the chart partials, derivatives
    from ros_vi.mechanics import FreeJoint
    system = trep.System()
    FreeJoint(system.world_frame, 'body').body.set_inertia(1.0, np.diag([1.0, 2.0, 3.0]))
    for fast in (True, False):
        mvi = trep.MidpointVI(system, fast=fast)
        mvi.initialize_from_state(0.0, np.zeros(6), np.array([0.1, 0.0, 0.2, 0.3, -0.2, 0.1]))
        for k in range(1, 4):
            mvi.step(0.01 * k)
        mvi.q2_dq1()
    # the general path's stacked kernels (frame vectors, springs, wrench twists, frame dots)
    # and the mimic folds
    from ros_vi import mimic
    system = trep.System()
    system.import_frames([rx('a', mass=[1.0, 0.1, 0.1, 0.1]), [
        tz(-1.0), [ry('b', mass=[1.0, 0.1, 0.1, 0.1]), [
            ry(mimic('a', 0.5)), [tz(-0.5, name='tip', mass=0.2)]]]]])
    trep.potentials.Gravity(system)
    trep.potentials.LinearSpring(system, 'World', 'tip', 1.0, 0.5)
    for wrench in (trep.forces.BodyWrench, trep.forces.HybridWrench,
                   trep.forces.SpatialWrench):
        wrench(system, 'tip', (0.1, 0.0, 0.2))
    trep.constraints.PointOnPlane(system, 'World', (1.0, 0.0, 0.0), 'tip')
    mvi = trep.MidpointVI(system)
    mvi.initialize_from_state(0.0, [0.0, 0.0], [0.1, 0.0])
    for k in range(1, 4):
        mvi.step(0.01 * k)
    mvi.q2_dq1()
    # the distance queries' kernels (ros_vi.collision): in-place kinematics and gradients
    from ros_vi.mechanics import kernel
    model = system.model
    R, P = np.zeros((model.nf, 3, 3)), np.zeros((model.nf, 3))
    S = np.zeros((model.nt, 6))
    kernel.forward_kinematics_into(*model.tree_args(), model.joint_positions(np.zeros(model.nq)),
                                   R, P)
    kernel.joint_twists_into(model.kind, model.cframe, model.corder, R, P, S)
    one = np.zeros(1, dtype=np.int64)
    kernel.separation_rates_into(S, model.frame_anc, one, one + model.nf - 1, np.zeros((1, 3)),
                                 np.ones((1, 3)), np.ones((1, 3)), np.zeros((1, model.nt)))
    # the contacts' geometry (ros_vi.mechanics.contact.ContactSet), a plane in the world
    from ros_vi.mechanics.contact_kernel import contact_geometry
    contact_geometry(R, P, S, one, one - 2, np.zeros((1, 3)), np.zeros(1), np.zeros((1, 3)),
                     np.eye(3)[None], np.ones((1, model.nt)))
    from ros_vi.mechanics.contact_kernel import contact_bounds
    contact_bounds(np.concatenate([R, np.eye(3)[None]]), np.concatenate([P, np.zeros((1, 3))]),
                   one, one - 1, np.zeros((1, 3)), np.zeros(1), np.zeros((1, 3)),
                   np.full(1, np.inf), np.zeros((1, 3)), np.eye(3)[None], one)
    from ros_vi.mechanics.contact_kernel import place_rims
    place_rims(np.concatenate([R, np.eye(3)[None]]), one, one - 1, np.eye(3)[None], one,
               np.zeros((1, 3)), np.eye(3)[:1], np.ones(1), np.zeros(1, dtype=bool), 1e-8,
               np.zeros((1, 3)))
    if not batch:
        return time.perf_counter() - start
    # batched rollouts (ros_vi.rollout): the parallel loop with a compiled law, and the
    # reductions the general path calls from Python
    from ros_vi.control.presets import DEMOS
    demo = DEMOS['pendulum']
    controller = demo.controller(demo.model(), dt=0.01)
    for compiled in (True, False):
        trep.rollout(demo.model(), np.zeros((2, 1)), np.zeros((2, 1)), controller, 0.02, 0.01,
                     target=trep.Target(goal=[np.pi]), record_every=1, compiled=compiled)
    return time.perf_counter() - start


def main():
    seconds = precompile()
    print('ros_vi: numba kernels compiled and cached (%.1f s)' % seconds)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
