"""Long-run acceptance tests of the midpoint variational integrator (run with ``-s`` to
see the measured numbers).

(a) undamped double pendulum, 10^5 steps: bounded node energy error without trend;
(b) a cyclic coordinate: its conjugate discrete momentum is conserved (discrete Noether);
(c) second-order convergence against a fine reference.

The energy is evaluated with the closed-form mass matrix and potential of the double
pendulum (independent of ros_vi), cross-checked against System.mass_matrix() at a few
points.
"""
import time

import numpy as np
import pytest

import ros_vi as trep
from ros_vi import MidpointVI, rx, ry, rz, tx, tz

G = 9.8


def undamped_double_pendulum():
    """Two rx joints, tz(-1) links, unit point masses, gravity (0, 0, -9.8)."""
    s = trep.System()
    s.import_frames([
        rx('theta1'), [
            tz(-1.0, mass=1.0), [
                rx('theta2'), [
                    tz(-1.0, mass=1.0)]]]])
    trep.potentials.Gravity(s, (0.0, 0.0, -G))
    return s


def dp_mass_matrix(q):
    """Closed-form mass matrices (..., 2, 2) of the unit double pendulum (theta2 relative)."""
    c2 = np.cos(q[..., 1])
    M = np.empty(q.shape[:-1] + (2, 2))
    M[..., 0, 0] = 3.0 + 2.0 * c2
    M[..., 0, 1] = M[..., 1, 0] = 1.0 + c2
    M[..., 1, 1] = 1.0
    return M


def dp_potential(q):
    """V = m g z summed: z1 = -cos(theta1), z2 = z1 - cos(theta1 + theta2)."""
    return -G * (2.0 * np.cos(q[..., 0]) + np.cos(q[..., 0] + q[..., 1]))


def dp_node_energy(q, p):
    """H(q_k, p_k) = 1/2 p^T M(q_k)^-1 p + V(q_k), vectorised over the leading axis."""
    M = dp_mass_matrix(q)
    v = np.linalg.solve(M, p[..., None])[..., 0]
    return 0.5 * np.einsum('...i,...i->...', p, v) + dp_potential(q)


def test_closed_form_matches_system():
    s = undamped_double_pendulum()
    rng = np.random.RandomState(0)
    for _ in range(5):
        q = rng.uniform(-np.pi, np.pi, 2)
        s.q = q
        np.testing.assert_allclose(s.mass_matrix(), dp_mass_matrix(q), rtol=1e-12,
                                   atol=1e-12)
        assert abs(s.potential_energy() - dp_potential(q)) < 1e-12


def run(mvi, t0, dt, nsteps, u=(), record=True):
    """Step ``nsteps`` times with fixed dt; returns (q2 history, p2 history, seconds)."""
    nq, nd = mvi.nq, mvi.nd
    qs = np.empty((nsteps + 1, nq)) if record else None
    ps = np.empty((nsteps + 1, nd)) if record else None
    if record:
        qs[0], ps[0] = mvi.q2, mvi.p2
    start = time.perf_counter()
    for k in range(1, nsteps + 1):
        mvi.step(t0 + k * dt, u)
        if record:
            qs[k] = mvi.q2
            ps[k] = mvi.p2
    return qs, ps, time.perf_counter() - start


# ------------------------------------------------------------------ (a) energy behaviour
def test_double_pendulum_energy_bounded_without_trend():
    s = undamped_double_pendulum()
    mvi = MidpointVI(s)
    assert mvi._fast is not None
    mvi.initialize_from_state(0.0, [np.pi / 2, 0.0], [0.0, 0.0])
    n, dt = 100000, 0.01
    qs, ps, seconds = run(mvi, 0.0, dt, n)
    assert np.all(np.isfinite(qs))
    H = dp_node_energy(qs, ps)
    err = np.abs(H - H[0])
    tenth = n // 10
    first, last = err[:tenth].max(), err[-tenth:].max()
    scale = 1.0 * G * 1.0          # m g l
    print('\n(a) double pendulum: %d steps dt=%g in %.2f s (%.0f steps/s); H0=%.6g; '
          'max|H-H0|=%.4g (%.3f%% of m g l); first tenth max=%.4g, last tenth max=%.4g, '
          'ratio=%.3f' % (n, dt, seconds, n / seconds, H[0], err.max(),
                          100 * err.max() / scale, first, last, last / first))
    # the motion is genuinely chaotic/large (not stuck near rest)
    assert np.ptp(qs[:, 1]) > 1.0
    assert err.max() <= 0.01 * scale
    assert last <= 1.5 * first


# -------------------------------------------------- (b) cyclic coordinate, Noether
def spinning_pendulum():
    """A body spinning freely about the vertical axis (rz 'psi', cyclic) carrying an
    off-axis pendulum (ry 'phi'); gravity (0, 0, -9.8)."""
    s = trep.System()
    s.import_frames([
        rz('psi', mass=[2.0, 0.3, 0.3, 0.5]), [
            tx(0.5, mass=0.5), [
                ry('phi'), [
                    tz(-1.0, mass=[1.0, 0.02, 0.02, 0.01])]]]])
    trep.potentials.Gravity(s, (0.0, 0.0, -G))
    return s


def test_cyclic_momentum_conserved():
    s = spinning_pendulum()
    mvi = MidpointVI(s)         # default settings (tolerance 1e-10)
    assert mvi._fast is not None
    psi = s.get_config('psi').index
    phi = s.get_config('phi').index
    p0 = np.zeros(2)
    p0[psi], p0[phi] = 1.7, 0.4
    q0 = np.zeros(2)
    q0[phi] = 1.0
    mvi.initialize_from_state(0.0, q0, p0)
    n, dt = 100000, 0.01
    qs, ps, seconds = run(mvi, 0.0, dt, n)
    assert np.all(np.isfinite(qs))
    drift = np.abs(ps[:, psi] - p0[psi]).max() / abs(p0[psi])
    print('\n(b) spinning pendulum: %d steps in %.2f s (%.0f steps/s); p_psi=%.6g, '
          'max relative drift=%.3g; phi range [%.3f, %.3f], p_phi range [%.3f, %.3f], '
          'psi advanced %.1f rad'
          % (n, seconds, n / seconds, p0[psi], drift, qs[:, phi].min(), qs[:, phi].max(),
             ps[:, phi].min(), ps[:, phi].max(), qs[-1, psi] - qs[0, psi]))
    # the exchange between psi and phi really happens (p_phi varies, psi rotates)
    assert np.ptp(ps[:, phi]) > 0.1
    assert abs(qs[-1, psi]) > 10.0
    assert drift <= 1e-12


# ------------------------------------------------------------ (c) convergence order
def _state_at_one(dt):
    s = undamped_double_pendulum()
    # The DEL residual has a round-off floor of about eps |M| |q| / dt (it contains
    # L_v = M (q2 - q1)/dt), ~3e-12 at dt = 1e-4: scale the tolerance with 1/dt so that
    # every run solves its steps to near machine precision but above that floor.
    mvi = MidpointVI(s, tolerance=2e-15 / dt)
    mvi.initialize_from_state(0.0, [np.pi / 2, 0.0], [0.0, 0.0])
    n = int(round(1.0 / dt))
    run(mvi, 0.0, dt, n, record=False)
    assert abs(mvi.t2 - 1.0) < 1e-9
    return np.concatenate([mvi.q2, mvi.p2])


def test_second_order_convergence():
    start = time.perf_counter()
    reference = _state_at_one(1e-4)
    dts = [0.02, 0.01, 0.005, 0.0025]
    errors = [np.linalg.norm(_state_at_one(dt) - reference) for dt in dts]
    ratios = [errors[i] / errors[i + 1] for i in range(len(dts) - 1)]
    print('\n(c) errors at t=1 vs dt=1e-4 reference: %s; ratios %s (%.2f s)'
          % (', '.join('dt=%g: %.4g' % (d, e) for d, e in zip(dts, errors)),
             ', '.join('%.3f' % r for r in ratios), time.perf_counter() - start))
    for r in ratios:
        assert 3.5 <= r <= 4.5, ratios
