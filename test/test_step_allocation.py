"""The compiled step allocates nothing that outlives it: memory traced over 10^4 steps is
flat (a leak of even one small object per step would show as ~0.5 MB)."""
import tracemalloc

import numpy as np

import ros_vi as trep
from ros_vi.resources import shipped_model
from ros_vi.urdf import import_urdf, import_urdf_file

import test_urdf_cases as cases


def _traced_growth(mvi, u, steps=10_000, dt=1e-3):
    t = mvi.t2
    for _ in range(200):                 # warm-up: caches, numba dispatch, free lists
        t += dt
        mvi.step(t, u)
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for _ in range(steps):
            t += dt
            mvi.step(t, u)
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return after - before


def test_compiled_step_memory_is_flat_on_the_arm():
    system = import_urdf_file(shipped_model('arm7'))
    # the compiled step alone (driven this hard the arm reaches its joint limits, whose
    # steps the general path takes)
    mvi = trep.MidpointVI(system, limits={})
    assert mvi.compiled
    mvi.initialize_from_state(0.0, np.linspace(-0.5, 0.5, 7), np.zeros(7))
    assert _traced_growth(mvi, np.linspace(-2.0, 2.0, 7)) < 4096
    assert np.all(np.isfinite(mvi.q2))


def test_compiled_step_memory_is_flat_with_mimic_joints():
    system = import_urdf(cases.mimic_robot())
    mvi = trep.MidpointVI(system, limits={})     # the compiled step alone (as above)
    assert mvi.compiled and system.model.nt > system.nQ
    mvi.initialize_from_state(0.0, [0.3, -0.2], np.zeros(2))
    assert _traced_growth(mvi, [0.1, -0.1]) < 4096
