"""Speed and CPU cost of the simulator node (default: the 7-DOF arm; ``--models`` for others).

For each model:
  * core: ``Simulation.tick()`` in this process, no ROS (the baseline of the same run);
  * node, real_time_factor 0: achieved tick rate [Hz] and real-time factor of the node
    process (1 ms ticks, joint_states + tf at 100 Hz, /clock at 100 Hz);
  * core paced: ``Simulation.tick()`` at 500 Hz and 1 kHz, sleeping between ticks, in this
    process: the CPU floor of real time on this machine (a tick after a sleep costs more
    than one in a tight loop);
  * node in real time (real_time_factor 1) at 500 Hz and 1 kHz: free running with /clock at
    100 Hz and at every tick, and in lockstep with an echo controller in this process
    answering every state: the achieved real-time factor and the CPU use of the node
    process [% of one core].

Targets: the arm at 1 kHz, joint states and tf at 100 Hz, uses <= 15 % of a core with /clock
at 100 Hz and <= 25 % with /clock at 1 kHz, real-time factor within 1 %.

Usage: ``.venv/bin/python benchmarks/bench_simulator.py [--seconds 3] [--models arm7 ...]``
(DDS is isolated: localhost discovery, a random domain id, logs in a temp dir).
"""
import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault('ROS_LOG_DIR', tempfile.mkdtemp(prefix='ros_vi_bench_log_'))
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ['ROS_DOMAIN_ID'] = str(random.SystemRandom().randint(1, 100))

import rclpy  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

sys.path.insert(0, ROOT)
from ros_vi.simulation import Simulation  # noqa: E402

MODELS = ('pendulum', 'cartpole', 'acrobot', 'arm7')
CLK_TCK = os.sysconf('SC_CLK_TCK')


def cpu_seconds(pid):
    """utime + stime [s] of a process (Linux /proc)."""
    with open('/proc/%d/stat' % pid) as fh:
        fields = fh.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def core_rate(model, seconds):
    sim = Simulation.from_urdf_file(os.path.join(ROOT, 'urdf', model + '.urdf'), rate=1000.0)
    sim.step(200)                                      # warm up (compiled kernels)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        sim.step(100)
        n += 100
    return n / (time.perf_counter() - t0)


def core_paced_cpu(model, rate, seconds):
    """CPU [% of a core] of ``Simulation.tick()`` alone, paced at ``rate`` by sleeping to each
    tick's due time in this process (no ROS): the floor any real-time node pays on this
    machine, where a tick after a sleep costs more than one in a tight loop (cold caches,
    idle clock)."""
    sim = Simulation.from_urdf_file(os.path.join(ROOT, 'urdf', model + '.urdf'), rate=rate)
    sim.step(200)
    period = 1.0 / rate
    cpu0, wall0 = time.process_time(), time.monotonic()
    k = 0
    while time.monotonic() - wall0 < seconds:
        sim.tick()
        k += 1
        delay = wall0 + k * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    return 100.0 * (time.process_time() - cpu0) / (time.monotonic() - wall0)


class Diagnostics:
    def __init__(self, node, namespace):
        self.lock = threading.Lock()
        self.items = []
        self.sub = node.create_subscription(DiagnosticArray, namespace + '/diagnostics',
                                            self._cb, 10)

    def _cb(self, msg):
        values = {v.key: v.value for v in msg.status[0].values}
        with self.lock:
            self.items.append((time.monotonic(), values))

    def wait(self, predicate, timeout=60.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                for t, v in self.items:
                    if predicate(t, v):
                        return t, v
            time.sleep(0.02)
        raise RuntimeError('no matching diagnostics within %g s' % timeout)


class EchoController:
    """Answers each joint_states with a zero-effort command stamped with the state's time
    (the cheapest controller that closes a lockstep loop)."""

    def __init__(self, node, namespace):
        self.node = node
        self.pub = node.create_publisher(JointState, namespace + '/joint_commands', 10)
        self.sub = node.create_subscription(JointState, namespace + '/joint_states',
                                            self._cb, 10)

    def _cb(self, msg):
        cmd = JointState(name=list(msg.name[:7]), effort=[0.0] * min(7, len(msg.name)))
        cmd.header.stamp = msg.header.stamp
        self.pub.publish(cmd)

    def close(self):
        self.node.destroy_subscription(self.sub)
        self.node.destroy_publisher(self.pub)


def run_node(node, model, seconds, rate, rtf, clock_rate=100.0, lockstep=False):
    """Start a simulator process; return (tick rate [Hz], CPU [% of a core])."""
    ns = '/bench_%s_%d_%d_%d_%d' % (model, int(rate), int(rtf * 10), int(clock_rate),
                                   lockstep)
    cmd = [sys.executable, '-m', 'ros_vi.ros.simulator_node', '--ros-args',
           '-r', '__ns:=' + ns, '-p', 'urdf_file:=' + os.path.join(ROOT, 'urdf', model + '.urdf'),
           '-p', 'rate:=%r' % float(rate), '-p', 'publish_rate:=%r' % (
               float(rate) if lockstep else 100.0),
           '-p', 'clock_rate:=%r' % float(clock_rate), '-p', 'lockstep:=%s' % str(
               lockstep).lower(),
           '-p', 'real_time_factor:=%r' % float(rtf), '-p', 'diagnostics_period:=0.5']
    diag = Diagnostics(node, ns)
    echo = EchoController(node, ns) if lockstep else None
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        t_first, _ = diag.wait(lambda t, v: int(v['ticks']) > 0)
        # warm-up of one second, then a window of `seconds`
        t_a, v_a = diag.wait(lambda t, v: t > t_first + 1.0)
        cpu_a = cpu_seconds(proc.pid)
        t_b, v_b = diag.wait(lambda t, v: t > t_a + seconds)
        cpu_b = cpu_seconds(proc.pid)
        ticks = int(v_b['ticks']) - int(v_a['ticks'])
        return ticks / (t_b - t_a), 100.0 * (cpu_b - cpu_a) / (t_b - t_a)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        node.destroy_subscription(diag.sub)
        if echo is not None:
            echo.close()


#: (label, rate [Hz], clock_rate [Hz], lockstep) of the real-time runs
REAL_TIME_RUNS = (('free, /clock 100 Hz', 500.0, 100.0, False),
                  ('free, /clock every tick', 500.0, 500.0, False),
                  ('free, /clock 100 Hz', 1000.0, 100.0, False),
                  ('free, /clock every tick', 1000.0, 1000.0, False),
                  ('lockstep (echo controller)', 500.0, 500.0, True),
                  ('lockstep (echo controller)', 1000.0, 1000.0, True))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--seconds', type=float, default=3.0, help='measurement window [s]')
    parser.add_argument('--models', nargs='+', default=['arm7'], choices=MODELS)
    args = parser.parse_args(argv)

    rclpy.init()
    node = rclpy.create_node('bench_probe')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spin = threading.Thread(target=executor.spin, daemon=True)
    spin.start()
    speed, real_time = [], []
    try:
        for model in args.models:
            core = core_rate(model, min(args.seconds, 2.0))
            fast, _ = run_node(node, model, args.seconds, 1000.0, 0.0)
            speed.append((model, core, fast, fast / 1000.0))
            for rate in (500.0, 1000.0):
                real_time.append((model, 'core alone, paced by sleep (no ROS)', rate, 1.0,
                                  core_paced_cpu(model, rate, args.seconds)))
            for label, rate, clock, lockstep in REAL_TIME_RUNS:
                achieved, cpu = run_node(node, model, args.seconds, rate, 1.0, clock, lockstep)
                real_time.append((model, label, rate, achieved / rate, cpu))
                print('.', end='', flush=True, file=sys.stderr)
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown()
    print(file=sys.stderr)
    print('Simulator node speed: ticks of 1 ms as fast as possible (real_time_factor 0, '
          'joint_states + tf at 100 Hz, /clock 100 Hz; %d cores)' % os.cpu_count())
    head = ('model', 'core tick/s (no ROS)', 'node tick/s', 'real-time factor')
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---|' * len(head))
    for model, core, fast, rtf in speed:
        print('| %s | %.0f | %.0f | %.2f |' % (model, core, fast, rtf))
    print()
    print('In real time (real_time_factor 1; free running: joint_states + tf at 100 Hz; '
          'lockstep: every tick published and answered)')
    head = ('model', 'mode', 'rate [Hz]', 'real-time factor', 'CPU [% of a core]')
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---|' * len(head))
    for model, label, rate, rtf, cpu in real_time:
        print('| %s | %s | %.0f | %.4f | %.1f |' % (model, label, rate, rtf, cpu))
    for model, label, rate, rtf, cpu in real_time:
        if model == 'arm7' and rate == 1000.0 and label.startswith('free'):
            target = 15.0 if '100 Hz' in label else 25.0
            print('7-DOF arm at 1 kHz, %s: %.1f %% of a core (target <= %g %%: %s), '
                  'real-time factor %.4f' % (label, cpu, target,
                                              'met' if cpu <= target else 'NOT met', rtf))


if __name__ == '__main__':
    main()
