"""trep tutorial "Design linear feedback controller" (linearFeedbackController.py), Python 3.

A damped pendulum (m = 1 kg, l = 1 m, damping 1.0, torque input) is stabilised at the
upright configuration qBar = pi by an LQR gain computed on the discrete system
(dt = 0.1 s, Q = I, R = I): the first gain of the finite-horizon solution approximates the
infinite-horizon one.  trep's published gain: [15.321700787, 4.139947239].

Run: python examples/linear_feedback_controller.py [--plot]
"""
import sys
from math import pi

import numpy as np
from numpy import dot

import ros_vi as trep
import ros_vi.discopt
from ros_vi import rx, tz


def build(q0=3. / 4. * pi, t0=0.0, tf=5.0, dt=0.1, m=1.0, l=1.0):
    """Pendulum, integrator and discrete system of the tutorial; returns a dict."""
    system = trep.System()                                   # Initialize system
    frames = [
        rx('theta', name="pendulumShoulder"), [
            tz(-l, name="pendulumArm", mass=m)]]
    system.import_frames(frames)                             # Add frames
    trep.potentials.Gravity(system, (0, 0, -9.8))            # Add gravity
    trep.forces.Damping(system, 1.0)                         # Add damping
    trep.forces.ConfigForce(system, 'theta', 'theta-torque')  # Add input

    mvi = trep.MidpointVI(system)
    mvi.initialize_from_configs(t0, np.array([q0]), t0 + dt, np.array([q0]))

    TVec = np.arange(t0, tf + dt, dt)                        # discrete time vector
    dsys = trep.discopt.DSystem(mvi, TVec)                   # discrete system
    return dict(system=system, mvi=mvi, dsys=dsys, TVec=TVec, q0=q0, tf=tf, dt=dt)


def feedback_gain(dsys, TVec, qBar=pi, Q=np.eye(2), R=np.eye(1)):
    """The tutorial's LQR gain about the constant upright trajectory: KVec[0] (1, 2)."""
    Qd = np.zeros((len(TVec), dsys.system.nQ))
    thetaIndex = dsys.system.get_config('theta').index
    for i, t in enumerate(TVec):
        Qd[i, thetaIndex] = qBar
    (Xd, Ud) = dsys.build_trajectory(Qd)
    Qk = lambda k: Q
    Rk = lambda k: R
    KVec = dsys.calc_feedback_controller(Xd, Ud, Qk, Rk)
    return KVec[0]


def simulate(env, KStabilize, qBar=pi):
    """Closed-loop run from q0; returns (T, Q, X, U) lists as in the tutorial."""
    dsys, mvi, tf, dt = env['dsys'], env['mvi'], env['tf'], env['dt']
    xBar = dsys.build_state(qBar)
    dsys.set(np.array([env['q0'], 0.]), np.array([0.]), 0)   # Reset discrete system state
    T = [mvi.t1]
    Q = [mvi.q1]
    X = [dsys.xk]
    U = []
    while mvi.t1 < tf - dt:
        x = dsys.xk
        xTilde = x - xBar
        u = -dot(KStabilize, xTilde)
        dsys.step(u)
        T.append(mvi.t1)
        Q.append(mvi.q1)
        X.append(x)
        U.append(u)
    return T, Q, X, U


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    env = build()
    K = feedback_gain(env['dsys'], env['TVec'])
    print('KStabilize = [%.9f, %.9f]' % (K[0, 0], K[0, 1]))
    dsys = env['dsys']
    dsys.set(np.array([env['q0'], 0.]), np.array([0.]), 0)
    print('after dsys.set: xk = %s, mvi.q1 = %.8f, system.q = %.8f (midpoint of the step)'
          % (np.array2string(dsys.xk, precision=8), env['mvi'].q1[0], dsys.system.q[0]))
    T, Q, X, U = simulate(env, K)
    print('final theta = %.6f rad (target pi = %.6f), max |u| = %.3f N m'
          % (Q[-1][0], pi, max(abs(float(u[0])) for u in U)))
    if '--plot' in argv:
        import matplotlib.pyplot as pylab
        ax1 = pylab.subplot(211)
        pylab.plot(T, X)
        pylab.title("Linear Feedback Controller")
        pylab.ylabel("X")
        pylab.legend(["qd", "p"])
        pylab.subplot(212, sharex=ax1)
        pylab.plot(T[1:], U)
        pylab.xlabel("T")
        pylab.ylabel("U")
        pylab.legend(["u"])
        pylab.show()
    return dict(K=K, T=T, Q=Q, X=X, U=U, env=env)


if __name__ == '__main__':
    main()
