"""Speed of the simulator node, per shipped URDF (and the 7-DOF arm).

For each model:
  * core: ``Simulation.tick()`` in this process, no ROS (the baseline of the same run);
  * node, real_time_factor 0: achieved tick rate [Hz] and real-time factor of the node
    process (rate 1000 Hz = 1 ms ticks, joint_states + tf at 100 Hz, /clock every tick);
  * node, real_time_factor 1 at rate 500 and 1000 Hz (publish_rate 100 Hz): CPU use of the
    node process [% of one core] and its achieved tick rate.

Target (issue 4): the 7-DOF arm holds 1 kHz in real time with at least 2x headroom, i.e.
the rtf-0 tick rate at 1 ms ticks is >= 2000 Hz.

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


def run_node(node, model, seconds, rate, rtf):
    """Start a simulator process; return (tick rate [Hz], CPU [% of a core])."""
    ns = '/bench_%s_%d_%d' % (model, int(rate), int(rtf * 10))
    cmd = [sys.executable, '-m', 'ros_vi.ros.simulator_node', '--ros-args',
           '-r', '__ns:=' + ns, '-p', 'urdf_file:=' + os.path.join(ROOT, 'urdf', model + '.urdf'),
           '-p', 'rate:=%r' % float(rate), '-p', 'publish_rate:=100.0',
           '-p', 'real_time_factor:=%r' % float(rtf), '-p', 'diagnostics_period:=0.5']
    diag = Diagnostics(node, ns)
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--seconds', type=float, default=3.0, help='measurement window [s]')
    parser.add_argument('--models', nargs='+', default=list(MODELS), choices=MODELS)
    args = parser.parse_args(argv)

    rclpy.init()
    node = rclpy.create_node('bench_probe')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spin = threading.Thread(target=executor.spin, daemon=True)
    spin.start()
    rows = []
    try:
        for model in args.models:
            core = core_rate(model, min(args.seconds, 2.0))
            fast, fast_cpu = run_node(node, model, args.seconds, 1000.0, 0.0)
            r500, cpu500 = run_node(node, model, args.seconds, 500.0, 1.0)
            r1000, cpu1000 = run_node(node, model, args.seconds, 1000.0, 1.0)
            rows.append((model, core, fast, fast / 1000.0, r500, cpu500, r1000, cpu1000))
            print('.', end='', flush=True, file=sys.stderr)
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown()
    print(file=sys.stderr)
    print('Simulator node speed (ticks of 1 ms for the rtf-0 columns; publish_rate 100 Hz; '
          '/clock every tick; %d cores)' % os.cpu_count())
    head = ('model', 'core tick/s', 'node tick/s rtf=0', 'RTF (1 ms ticks)',
            '500 Hz: rate', 'CPU %', '1 kHz: rate', 'CPU %')
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---|' * len(head))
    for model, core, fast, rtf, r500, c500, r1000, c1000 in rows:
        print('| %s | %.0f | %.0f | %.2f | %.1f | %.0f | %.1f | %.0f |'
              % (model, core, fast, rtf, r500, c500, r1000, c1000))
    arm = [r for r in rows if r[0] == 'arm7']
    if arm:
        headroom = arm[0][3]
        print('\n7-DOF arm: real-time factor %.2f at 1 kHz (target >= 2: %s); CPU %.0f %% '
              'of one core in real time at 1 kHz'
              % (headroom, 'met' if headroom >= 2 else 'NOT met', arm[0][7]))


if __name__ == '__main__':
    main()
