"""`python -m ros_vi.demo` (README's run command after set-up): the pendulum swing-up over
DDS prints progress and a summary, writes the PNG it names and exits 0; a run too short to
swing up exits 1 saying so."""
import os
import re
import subprocess
import sys

from .harness import ROOT


def _demo(tmp_path, *args):
    # the test session's isolated ROS environment (conftest) is inherited
    return subprocess.run([sys.executable, '-m', 'ros_vi.demo', *args], cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=ROOT))


def test_demo_swings_the_pendulum_up_and_writes_the_plot(tmp_path):
    png = tmp_path / 'out' / 'pendulum.png'
    png.parent.mkdir()
    proc = _demo(tmp_path, '--duration', '8', '--output', str(png))
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    # progress about once per simulated second: sim time, mode, energy error
    lines = re.findall(r't = +([0-9.]+) s +mode (\w+) +E - E_goal = +([-+0-9.]+) J', out)
    times = [float(t) for t, _, _ in lines]
    assert {float(k) for k in range(8)} <= set(times)
    assert lines[0][1] == 'kick' and lines[-1][1] == 'balance'
    # the summary
    m = re.search(r'upright \(.*\): from t = ([0-9.]+) s', out)
    assert m and float(m.group(1)) <= 8.0
    assert re.search(r'final error: +theta [-+]\d', out)
    assert re.search(r'max \|u\|: +theta 5\b', out)
    assert re.search(r'wall time: +[0-9.]+ s', out)
    assert 'plot:         %s' % png in out
    assert png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n' and png.stat().st_size > 10000


def test_demo_exits_nonzero_when_the_swing_up_does_not_finish(tmp_path):
    proc = _demo(tmp_path, '--duration', '2')
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert 'FAILED: the pendulum did not end up upright within 2 s' in proc.stderr
    assert 'NOT reached' in proc.stdout
    assert (tmp_path / 'pendulum_swingup.png').is_file()     # the plot is written anyway


def test_offline_demo_is_the_same_loop_without_ros(tmp_path):
    """--offline runs ros-vi simulate: the same swing-up in one process, with its plot."""
    proc = _demo(tmp_path, '--offline')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'ros-vi simulate: pendulum, controller swingup, dt = 0.02 s, 15 s' in proc.stdout
    assert 'final q:     theta -3.14159' in proc.stdout or \
        'final q:     theta +3.14159' in proc.stdout
    png = tmp_path / 'pendulum_swingup.png'
    assert 'plot: %s' % png in proc.stdout
    assert png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_the_demo_finds_its_files_in_any_install(tmp_path, monkeypatch):
    """From a colcon install the demo looked for site-packages/urdf/pendulum.urdf (a path
    relative to its own source): its parameter file and model come through the one
    resource locator now, from whichever share folder it finds."""
    import shutil
    from ros_vi.ros import demo_loop
    from ros_vi.resources import share_directory
    real = share_directory()
    share = tmp_path / 'install' / 'share' / 'ros_vi'
    for folder in ('config', 'urdf'):
        shutil.copytree(os.path.join(real, folder), share / folder)
    shutil.copy(os.path.join(real, 'package.xml'), share / 'package.xml')
    marker = tmp_path / 'install' / 'share' / 'ament_index' / 'resource_index' / 'packages'
    marker.mkdir(parents=True)
    (marker / 'ros_vi').touch()
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path / 'install'))
    path = demo_loop.config_file('pendulum')
    assert path == str(share / 'config' / 'pendulum_swingup.yaml')
    sim, ctrl = demo_loop.demo_parameters(path, 'swingup_controller')
    assert sim['urdf_file'] == str(share / 'urdf' / 'pendulum.urdf')
    assert ctrl['urdf_file'] == sim['urdf_file'] and os.path.isfile(sim['urdf_file'])
