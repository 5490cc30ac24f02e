"""trep tutorial "Design energy shaping swing-up controller"
(energyShapingSwingupController.py), Python 3.

The damped pendulum starts hanging (q0 = 0) with the torque limited to |u| <= 5 N m.  The
energy controller u = -K_E * thetadot * (E - E_bar) pumps energy towards that of the
upright rest state E_bar (with a kick when thetadot = 0); damping keeps it just short of
upright.  The tutorial also computes the LQR stabiliser gain (dt = 0.1, Q = I, R = I) used
by the switching-time tutorial.

Run: python examples/energy_shaping_swingup.py [--plot]
"""
import sys
from math import pi

import numpy as np

import ros_vi as trep
import ros_vi.discopt
from ros_vi import rx, tz


def run(q0=0., t0=0.0, tf=10.0, dt=0.1, qBar=pi, uMax=5., m=1.0, l=1.0):
    """Tutorial simulation; returns dict(T, Q, X, U, E, eBar, KStabilize)."""
    Q_ = np.eye(2)  # Cost weights for states
    R_ = np.eye(1)  # Cost weights for inputs
    system = trep.System()
    frames = [
        rx('theta', name="pendulumShoulder"), [
            tz(-l, name="pendulumArm", mass=m)]]
    system.import_frames(frames)
    trep.potentials.Gravity(system, (0, 0, -9.8))
    trep.forces.Damping(system, 1.0)
    trep.forces.ConfigForce(system, 'theta', 'theta-torque')

    mvi = trep.MidpointVI(system)
    mvi.initialize_from_configs(t0, np.array([q0]), t0 + dt, np.array([q0]))

    TVec = np.arange(t0, tf + dt, dt)
    dsys = trep.discopt.DSystem(mvi, TVec)

    # Design linear feedback controller
    Qd = np.zeros((len(TVec), dsys.system.nQ))
    thetaIndex = dsys.system.get_config('theta').index
    for i, t in enumerate(TVec):
        Qd[i, thetaIndex] = qBar
    (Xd, Ud) = dsys.build_trajectory(Qd)
    KVec = dsys.calc_feedback_controller(Xd, Ud, lambda k: Q_, lambda k: R_)
    KStabilize = KVec[0]

    # Design energy shaping swing-up controller
    system.get_config('theta').q = qBar
    eBar = system.total_energy()
    KEnergy = 1

    # Reset discrete system state
    dsys.set(np.array([q0, 0.]), np.array([0.]), 0)

    T = [mvi.t1]
    Q = [mvi.q1]
    X = [dsys.xk]
    U = []
    E = [system.total_energy()]
    while mvi.t1 < tf - dt:
        x = dsys.xk                       # Get current state
        xDot = x[1]                       # Get equivalent of angular velocity
        e = system.total_energy()         # Get current energy of the system
        eTilde = e - eBar                 # Difference to the desired energy
        if xDot == 0:
            u = np.array([uMax])          # Kick if necessary
        else:
            u = np.array([-xDot * KEnergy * eTilde])
        u = min(np.array([uMax]), max(np.array([-uMax]), u))  # Constrain input
        dsys.step(u)
        T.append(mvi.t1)
        Q.append(mvi.q1)
        X.append(x)
        U.append(u)
        E.append(system.total_energy())
    return dict(T=T, Q=Q, X=X, U=U, E=E, eBar=eBar, KStabilize=KStabilize, system=system)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    r = run()
    theta = np.array([q[0] for q in r['Q']])
    U = np.array([float(u[0]) for u in r['U']])
    print('E_bar = %.4f J; final energy %.4f J' % (r['eBar'], r['E'][-1]))
    print('max |theta| = %.4f rad (upright pi), max |u| = %.3f N m (limit 5)'
          % (np.max(np.abs(theta)), np.max(np.abs(U))))
    if '--plot' in argv:
        import matplotlib.pyplot as pylab
        ax1 = pylab.subplot(211)
        pylab.plot(r['T'], r['X'])
        pylab.title("Energy Shaping Controller")
        pylab.ylabel("X")
        pylab.legend(["qd", "p"])
        pylab.subplot(212, sharex=ax1)
        pylab.plot(r['T'][1:], r['U'])
        pylab.xlabel("T")
        pylab.ylabel("U")
        pylab.show()
    return r


if __name__ == '__main__':
    main()
