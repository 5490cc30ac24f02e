"""The ``ros-vi`` command line, run as a user runs it (a subprocess) and in-process."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from ros_vi.cli import main
from ros_vi.cli.models import shipped_names
from ros_vi.urdf import import_urdf_file
from ros_vi.resources import shipped_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SHIPPED = ['acrobot', 'arm7', 'cartpole', 'pendulum']
FLOATING = ['humanoid', 'quadruped', 'wheeled_base']   # floating bases (no demo controller)
TOOLS = ['gripper']                           # a mimic-finger gripper (no demo controller)


def ros_vi(*args, check=None):
    """``python -m ros_vi ARGS`` in a subprocess: (exit status, stdout, stderr)."""
    proc = subprocess.run([sys.executable, '-m', 'ros_vi'] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=600)
    if check is not None:
        assert proc.returncode == check, proc.stderr + proc.stdout
    return proc.returncode, proc.stdout, proc.stderr


def test_shipped_models_are_listed():
    assert shipped_names() == sorted(SHIPPED + FLOATING + TOOLS)


def test_help_lists_every_command_and_unknown_ones_exit_2():
    status, out, _ = ros_vi('--help', check=0)
    from ros_vi.cli import COMMANDS
    for name in COMMANDS:
        assert name in out
    status, _, err = ros_vi('frobnicate')
    assert status == 2 and "invalid choice: 'frobnicate'" in err
    status, _, err = ros_vi('info', 'pendulum', '--bogus')
    assert status == 2 and 'unrecognized arguments: --bogus' in err


@pytest.mark.parametrize('model', SHIPPED + FLOATING + TOOLS)
def test_info_matches_the_imported_model(model, capsys):
    assert main(['info', model, '--json']) == 0
    facts = json.loads(capsys.readouterr().out)
    system = import_urdf_file(shipped_model(model))
    assert facts['dof'] == system.nQ
    assert facts['configs'] == [c.name for c in system.configs]
    # total mass from the links equals the mass the dynamics sees
    assert facts['total_mass'] == pytest.approx(
        sum(f.mass for f in system.frames if f.mass), rel=1e-12)
    moving = [j['name'] for j in facts['joints'] if j['role'] != 'fixed']
    assert moving == system.urdf.joint_names + system.urdf.mimic_joint_names or \
        sorted(moving) == sorted(system.urdf.joint_names + system.urdf.mimic_joint_names)
    # the <ros2_control> block's interfaces where it lists the joint, else the simulator's
    # default on every joint with a non-zero effort limit, none on a passive joint
    commands = {j['name']: (j['command_interfaces'], j['command_source'])
                for j in facts['joints']}
    declared = system.urdf.joint_controls
    for name, limit in zip(system.urdf.input_joint_names, system.urdf.input_effort_limits):
        if name in declared:
            expected = (list(declared[name].command_interfaces), 'ros2_control')
        else:
            expected = (['effort', 'position', 'velocity'], 'default') if limit else ([], None)
        assert commands[name] == expected
    assert main(['info', model]) == 0
    text = capsys.readouterr().out
    assert '%d DOF' % system.nQ in text and facts['root_link'] in text


def test_info_reports_mimic_joints_and_importer_warnings(tmp_path, capsys):
    urdf = tmp_path / 'gripper.urdf'
    urdf.write_text('''<robot name="g">
      <link name="base"/>
      <link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="b"><inertial><mass value="0.5"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="left" type="prismatic"><parent link="base"/><child link="a"/>
        <axis xyz="1 0 0"/><limit lower="0" upper="0.1" effort="10" velocity="1"/></joint>
      <joint name="right" type="prismatic"><parent link="base"/><child link="b"/>
        <axis xyz="1 0 0"/><limit lower="-0.1" upper="0" effort="10" velocity="1"/>
        <mimic joint="left" multiplier="-1" offset="0"/></joint>
      <joint name="spin" type="continuous"><parent link="b"/><child link="c"/></joint>
      <link name="c"/>
    </robot>''')
    assert main(['info', str(urdf), '--json']) == 0
    facts = json.loads(capsys.readouterr().out)
    assert (facts['dof'], facts['dynamic_dof']) == (2, 1) and facts['mimic_joints'] == ['right']
    right = [j for j in facts['joints'] if j['name'] == 'right'][0]
    assert right['role'] == 'mimic of left (x -1 +0)'
    assert any("'spin'" in w and 'kinematic' in w for w in facts['warnings'])
    assert facts['total_mass'] == 1.5


def test_info_prints_the_inertia_warning(tmp_path, capsys):
    urdf = tmp_path / 'rod.urdf'
    urdf.write_text('''<robot name="rod">
      <link name="base"><inertial><mass value="2"/><inertia ixx="0" iyy="0" izz="3e-6" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="arm"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.5" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="j" type="continuous"><parent link="base"/><child link="arm"/></joint>
    </robot>''')
    assert main(['info', str(urdf)]) == 0
    text = capsys.readouterr().out
    # the welded base's rod-like placeholder is not judged; the moving arm is, once
    assert text.split('importer warnings: ')[1] == (
        "\n  - link 'arm': inertia violates the triangle inequality (principal moments [0.1, "
        "0.1, 0.5]: 0.5 > 0.1 + 0.1; no rigid body has these moments); imported it as written "
        "(as urdfdom, Pinocchio and Gazebo do; inertia='balance' evens the moments out as "
        "MuJoCo's balanceinertia does)\n")


def test_info_bad_models_are_named():
    status, _, err = ros_vi('info', 'no_such_robot')
    assert status == 2
    assert "unknown model 'no_such_robot'" in err and 'arm7, cartpole' in err
    status, _, err = ros_vi('info', '/nonexistent/robot.urdf')
    assert status == 2 and "'/nonexistent/robot.urdf': no such file" in err


def test_info_malformed_urdf_is_named(tmp_path):
    bad = tmp_path / 'bad.urdf'
    bad.write_text('<robot name="x"><link name="a"></robot>')
    status, _, err = ros_vi('info', bad)
    assert status == 2 and 'bad.urdf' in err and 'malformed XML' in err


def test_console_script_is_declared():
    import ros_vi
    root = os.path.dirname(os.path.dirname(ros_vi.__file__))
    with open(os.path.join(root, 'setup.py')) as fh:
        assert "'ros-vi = ros_vi.cli:main'" in fh.read()


# ---------------------------------------------------------------------- simulate and plot
def _pixels(path):
    from PIL import Image
    return np.asarray(Image.open(path).convert('L'), dtype=float)


@pytest.mark.parametrize('model', SHIPPED)
def test_simulate_records_the_free_run_of_each_model(model, tmp_path):
    """ros-vi simulate MODEL with no controller records exactly the closed loop's samples
    (ros_vi.simulation.simulate on the same model); npz and csv agree; the plot is drawn."""
    from ros_vi.cli.models import import_model, resolve_model
    from ros_vi.control import DEMOS
    from ros_vi.recording import load_recording
    from ros_vi.simulation import simulate
    npz, csv, png = tmp_path / 'run.npz', tmp_path / 'run.csv', tmp_path / 'run.png'
    first = {'pendulum': 'theta', 'cartpole': 'cart', 'acrobot': 'shoulder',
             'arm7': 'joint_1'}[model]
    status, out, err = ros_vi('simulate', model, '--duration', 0.25, '--dt', 0.005,
                              '--velocity', first + '=0.5', '--out', npz, csv, '--plot', png,
                              check=0)
    assert 'summary:' in out and 'us physics' in out and 'recorded: %s (51 samples)' % npz in out
    assert err == ''                    # not a terminal: no progress bar
    rec = load_recording(npz)
    source = resolve_model(model)
    plant = import_model(source)[0]
    q0 = DEMOS[model].start if model in DEMOS else plant.q
    v0 = np.zeros(plant.nQ)
    v0[0] = 0.5
    ref = simulate(None, plant, 0.25, q0, v0, dt=0.005)
    assert rec.joint_names == ref.joint_names and len(rec) == 51
    np.testing.assert_array_equal(rec.t, ref.t)
    np.testing.assert_allclose(rec.position, ref.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rec.energy, ref.E, rtol=1e-12, atol=1e-12)
    assert rec.robot_description == source.text
    assert rec.metadata['model'] == model and rec.metadata['dt'] == 0.005
    from_csv = load_recording(csv)
    np.testing.assert_array_equal(from_csv.position, rec.position)
    np.testing.assert_array_equal(from_csv.velocity, rec.velocity)
    pixels = _pixels(png)
    assert pixels.shape[0] > 300 and pixels.std() > 20       # drawn, not blank
    assert np.ptp(rec.position, axis=0).max() > 1e-3         # something moved


def test_simulate_swingup_reaches_upright_and_lqr_holds_the_arm(tmp_path):
    status, out, _ = ros_vi('simulate', 'pendulum', '--controller', 'swingup',
                            '--out', tmp_path / 'p.npz', check=0)
    from ros_vi.recording import load_recording
    rec = load_recording(tmp_path / 'p.npz')
    assert rec.t[-1] == pytest.approx(15.0)                  # the demo's length
    assert abs(abs(rec.position[-1, 0]) - np.pi) < 1e-3
    assert np.abs(rec.effort).max() == pytest.approx(5.0)    # the tutorial's |u| <= 5 N m
    q0 = {'joint_2': 0.5, 'joint_4': -1.0}
    status, out, _ = ros_vi('simulate', 'arm7', '--controller', 'lqr', '--duration', 1,
                            '--initial', 'joint_2=0.5', 'joint_4=-1', '--out',
                            tmp_path / 'a.npz', check=0)
    rec = load_recording(tmp_path / 'a.npz')
    final = dict(zip(rec.joint_names, rec.position[-1]))
    free = ros_vi('simulate', 'arm7', '--duration', 1, '--initial', 'joint_2=0.5',
                  'joint_4=-1', '--out', tmp_path / 'f.npz', check=0)
    fell = dict(zip(rec.joint_names, load_recording(tmp_path / 'f.npz').position[-1]))
    for joint, value in q0.items():
        assert abs(final[joint] - value) < 0.01 < abs(fell[joint] - value)
    assert 'max |u|:' in out


def test_simulate_initial_velocity_and_gravity(tmp_path):
    from ros_vi.recording import load_recording
    ros_vi('simulate', 'pendulum', '--gravity', 0, '--velocity', 'theta=1.0', '--duration',
           0.5, '--dt', 0.01, '--out', tmp_path / 'g0.npz', check=0)
    rec = load_recording(tmp_path / 'g0.npz')
    assert rec.metadata['gravity'] == 0
    # no gravity: the damped pendulum (1 kg m^2, 1 N m s/rad) obeys v' = -v.  trep's VI puts
    # the step's damping impulse J = -c (q2 - q1) in the first DEL slot, so p2 = m (q2 -
    # q1)/h with p1 = (m + c h)(q2 - q1)/h: p_k = (1 + h)^-k exactly.  What is published is
    # the momentum at the step's end, p2 + J/2 = (1 - h/2) p_k (after the first sample, the
    # initial state as given)
    h = 0.01
    k = np.arange(len(rec))
    expected = np.where(k == 0, 1.0, (1 - h / 2) * (1 + h) ** -k)
    np.testing.assert_allclose(rec.velocity[:, 0], expected, rtol=1e-12)


def _solver_breaks_after(monkeypatch, t_break):
    """Make every MidpointVI step ending after ``t_break`` [s] fail to converge."""
    from ros_vi import ConvergenceError, MidpointVI
    real_step = MidpointVI.step

    def breaks(self, t2, *args, **kwargs):
        if t2 > t_break + 1e-9:
            raise ConvergenceError('solver broke')
        return real_step(self, t2, *args, **kwargs)
    monkeypatch.setattr(MidpointVI, 'step', breaks)


def test_a_failing_simulation_keeps_its_recording_and_exits_1(tmp_path, monkeypatch, capsys):
    """The solver breaks at t > 0.1 s: exit 1 with the time and reason; the recordings hold
    the samples up to the failure and are complete files."""
    from ros_vi.recording import load_recording
    _solver_breaks_after(monkeypatch, 0.1)
    npz, csv = tmp_path / 'run.npz', tmp_path / 'run.csv'
    assert main(['simulate', 'acrobot', '--duration', '1', '--dt', '0.01', '--initial',
                 'shoulder=1', '--out', str(npz), str(csv), '--plot',
                 str(tmp_path / 'run.png')]) == 1
    out = capsys.readouterr().out
    assert 'FAILED at t = 0.1 s' in out and 'solver broke' in out
    for path in (npz, csv):
        rec = load_recording(path)
        assert len(rec) == 11 and rec.t[-1] == pytest.approx(0.1)
    assert (tmp_path / 'run.png').exists()


@pytest.mark.parametrize('args, message', [
    (['pendulum', '--initial', 'elbow=1'], "--initial: unknown joint 'elbow' (joints: theta)"),
    (['pendulum', '--initial', 'theta'], "--initial 'theta': expected JOINT=VALUE"),
    (['pendulum', '--velocity', 'theta=fast'], "'fast' is not a number"),
    (['pendulum', '--initial', 'theta=nan'], 'must be finite'),
    (['pendulum', '--dt', '-0.01'], '--dt must be finite and > 0'),
    (['pendulum', '--duration', '0'], '--duration must be finite and > 0'),
    (['pendulum', '--out', 'run.txt'], "--out 'run.txt': unknown file type"),
    (['arm7', '--controller', 'swingup'], 'swingup is available for the shipped acrobot, '
                                          'cartpole, pendulum'),
    (['robot_x'], "unknown model 'robot_x'"),
])
def test_simulate_bad_input_exits_2_naming_it(args, message, capsys):
    assert main(['simulate'] + args) == 2
    err = capsys.readouterr().err
    assert err.startswith('ros-vi simulate: error: ') and message in err


def test_simulate_lqr_refuses_a_configuration_it_cannot_hold(capsys):
    # the cart-pole's pole is unactuated: held at 0.5 rad it falls, so no LQR about it
    assert main(['simulate', 'acrobot', '--controller', 'lqr',
                 '--duration', '0.1']) == 0      # the demo's LQR (about upright) exists
    from ros_vi.cli.simulate import _controller
    from ros_vi.cli.models import import_model, resolve_model
    from ros_vi.cli import CommandError
    source = resolve_model('cartpole')
    source.shipped = False                      # as if it were the user's own file
    with pytest.raises(CommandError, match='--controller lqr: goal .* is not an equilibrium'):
        _controller('lqr', source, lambda: import_model(source)[0], 0.01,
                    np.array([0.0, 0.5]))


@pytest.mark.parametrize('suffix', ['.npz', '.csv'])
def test_plot_reads_each_format(tmp_path, suffix):
    run = tmp_path / ('run' + suffix)
    ros_vi('simulate', 'cartpole', '--duration', 0.5, '--dt', 0.01, '--initial', 'pole=3',
           '--out', run, check=0)
    status, out, _ = ros_vi('plot', run, check=0)
    png = tmp_path / 'run.png'
    assert 'plot: %s (51 samples' % png in out
    assert _pixels(png).std() > 20
    ros_vi('plot', run, '--joints', 'pole', '--out', tmp_path / 'pole.png', check=0)
    assert _pixels(tmp_path / 'pole.png').std() > 20


def test_plot_bad_input_exits_2_naming_it(tmp_path, capsys):
    assert main(['plot', str(tmp_path / 'missing.npz')]) == 2
    assert 'missing.npz' in capsys.readouterr().err
    run = tmp_path / 'run.npz'
    assert main(['simulate', 'pendulum', '--duration', '0.1', '--out', str(run)]) == 0
    capsys.readouterr()
    assert main(['plot', str(run), '--joints', 'elbow']) == 2
    assert "no joint 'elbow' in the recording; it has theta" in capsys.readouterr().err
    assert main(['plot', str(run), '--out', str(tmp_path / 'x.notaformat')]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_bench_lists_and_runs_the_benchmark_scripts(capsys):
    from ros_vi.cli.bench import SHORT, available, benchmark_folder
    names = available(benchmark_folder())
    assert set(SHORT) <= set(names)
    assert main(['bench', '--list']) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in names)
    assert main(['bench', 'no_such']) == 2
    assert "unknown benchmark 'no_such'" in capsys.readouterr().err
    status, out, err = ros_vi('bench', 'urdf_import')
    # the table is printed; whether the timing target was met (exit 0 or 1) depends on the
    # machine's load, so it is not asserted here
    assert status in (0, 1) and 'Traceback' not in err
    assert '=== urdf_import --repeat 5' in out and '7-DOF arm median import' in out
    assert ('failed or missed a target: urdf_import' in out) == (status == 1)


# ---------------------------------------------------------------------- MCAP from the CLI
def _bag_counts_and_joint_states(path):
    """{topic: count} and the joint_states (stamp ns, positions) read by rosbags, with types
    from the definitions embedded in the file (an independent reader)."""
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore
    store = get_typestore(Stores.EMPTY)
    counts, states = {}, []
    with Reader(path) as reader:
        for conn in reader.connections:
            store.register(get_types_from_msg(conn.msgdef.data, conn.msgtype))
        for conn, stamp, raw in reader.messages():
            counts[conn.topic] = counts.get(conn.topic, 0) + 1
            if conn.topic == '/joint_states':
                msg = store.deserialize_cdr(raw, conn.msgtype)
                states.append((msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec,
                               np.array(msg.position)))
    return counts, states


def test_simulate_to_mcap_equals_the_npz_of_the_same_run_and_plots(tmp_path):
    from ros_vi.recording import load_recording
    mcap, npz = tmp_path / 'run.mcap', tmp_path / 'run.npz'
    ros_vi('simulate', 'acrobot', '--controller', 'swingup', '--duration', 2, '--out', mcap,
           npz, check=0)
    rec = load_recording(npz)
    counts, states = _bag_counts_and_joint_states(mcap)
    n = len(rec)
    assert n == 2 / 0.01 + 1
    assert counts == {'/joint_states': n, '/tf': n, '/clock': n, '/energy': n,
                      '/tf_static': 1, '/robot_description': 1}
    assert [s for s, _ in states] == [round(t * 1e9) for t in rec.t]
    np.testing.assert_array_equal([p for _, p in states], rec.position)
    back = load_recording(mcap)
    np.testing.assert_array_equal(back.effort, rec.effort)
    np.testing.assert_array_equal(back.energy, rec.energy)
    assert back.metadata['controller'] == 'swingup'
    status, out, _ = ros_vi('plot', mcap, check=0)
    assert _pixels(tmp_path / 'run.png').std() > 20


def test_a_failing_simulation_leaves_a_readable_mcap(tmp_path, monkeypatch, capsys):
    _solver_breaks_after(monkeypatch, 0.05)
    mcap = tmp_path / 'run.mcap'
    assert main(['simulate', 'arm7', '--duration', '1', '--dt', '0.01', '--out',
                 str(mcap)]) == 1
    assert 'FAILED at t = 0.05 s' in capsys.readouterr().out
    counts, states = _bag_counts_and_joint_states(mcap)
    assert counts['/joint_states'] == counts['/tf'] == 6
    assert states[-1][0] == 50_000_000


def test_simulate_animates_and_animate_draws_a_still(tmp_path):
    from PIL import Image
    gif, npz, png = tmp_path / 'run.gif', tmp_path / 'run.npz', tmp_path / 'still.png'
    status, out, err = ros_vi('simulate', 'arm7', '--duration', 0.4, '--dt', 0.01,
                              '--velocity', 'joint_1=2', '--out', npz, '--animate', gif,
                              check=0)
    assert 'animation: %s (10 frames)' % gif in out
    assert 'link_1' in err                     # its mesh is not found: drawn as a skeleton
    with Image.open(gif) as movie:
        assert movie.n_frames == 10
        first = np.asarray(movie.convert('L'), dtype=float)
        movie.seek(9)
        last = np.asarray(movie.convert('L'), dtype=float)
    assert first.std() > 10 and np.abs(first - last).mean() > 0.1
    status, out, _ = ros_vi('animate', npz, '--out', png, '--start', 0.2, check=0)
    assert 'still: %s (t = 0.2 s)' % png in out
    assert _pixels(png).std() > 10
    status, _, err = ros_vi('simulate', 'pendulum', '--animate', tmp_path / 'x.avi')
    assert status == 2 and "--animate" in err and 'x.avi' in err


# ----------------------------------------------------- outputs and sizes (issue #25)
@pytest.fixture(scope='module')
def swing(tmp_path_factory):
    path = tmp_path_factory.mktemp('swing') / 'swing.npz'
    assert main(['simulate', 'pendulum', '--initial', 'theta=1', '--duration', '0.5',
                 '--out', str(path), '--no-progress']) == 0
    return str(path)


@pytest.mark.parametrize('args, message', [
    (['simulate', 'pendulum', '--out', '/nonexistent/run.npz'],
     "cannot write '/nonexistent/run.npz' (--out): no such directory '/nonexistent'"),
    (['simulate', 'pendulum', '--out', '{tmp}/run.csv', '/nonexistent/run.csv'],
     "cannot write '/nonexistent/run.csv' (--out): no such directory"),
    (['simulate', 'pendulum', '--animate', '/nonexistent/run.gif'],
     "cannot write '/nonexistent/run.gif' (--animate): no such directory"),
    (['simulate', 'pendulum', '--plot', '/nonexistent/run.png'],
     "cannot write '/nonexistent/run.png' (--plot): no such directory"),
    (['simulate', 'pendulum', '--plot', '{tmp}/run.notanimage'],
     "cannot write '{tmp}/run.notanimage' (--plot): unknown file type '.notanimage'"),
    (['simulate', 'pendulum', '--out', '{swing}/run.npz'],
     "cannot write '{swing}/run.npz' (--out): no such directory '{swing}'"),
    (['plot', '{swing}', '--out', '/nonexistent/x.png'],
     "cannot write '/nonexistent/x.png' (--out): no such directory"),
    (['simulate', 'pendulum', '--dt', '1e-12'],
     '5 s at dt = 1e-12 s is 5e+12 steps, more than the 1,000,000 a run may take (MAX_STEPS)'),
    (['animate', '{swing}', '--fps', '1e9'],
     '0.5 s at 1e+09 fps and speed 1 is 5e+08 frames, more than the 30,000 an animation may '
     'have (MAX_FRAMES)'),
    (['animate', '{swing}', '--speed', '1e-9'], 'more than the 30,000 an animation may have'),
    (['animate', '{swing}', '--out', '/nonexistent/x.mp4'],
     "cannot write '/nonexistent/x.mp4' (--out): no such directory"),
])
def test_outputs_and_sizes_are_checked_before_the_work(tmp_path, swing, capsys, args,
                                                       message):
    """A path that cannot be written, or a run too large to keep in memory, was found only
    after the work (a traceback at the end of the simulation, 36 TiB asked for at dt =
    1e-12): now it is one line and exit 2 before anything is simulated or drawn."""
    fill = {'{tmp}': str(tmp_path), '{swing}': swing}
    for key, value in fill.items():
        args = [a.replace(key, value) for a in args]
        message = message.replace(key, value)
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.err.count('\n') == 1 and message in captured.err, captured.err
    assert 'summary' not in captured.out and not captured.out.strip()
    assert sorted(os.listdir(tmp_path)) == []


def test_a_recording_that_fills_the_disk_keeps_what_it_has_and_exits_1(tmp_path,
                                                                      monkeypatch, capsys):
    """The MCAP writer meets a full disk during the run: the run goes on, the file ends
    after its last whole chunk and reads back, and the exit status is 1."""
    import builtins
    from test_recording_mcap import _Disk
    from ros_vi.recording import load_recording
    from ros_vi.recording import mcap as mcap_module
    path = tmp_path / 'run.mcap'

    def disk(name, mode, **kwargs):
        return _Disk(name, 1_000_000) if str(name) == str(path) and 'w' in mode else \
            builtins.open(name, mode, **kwargs)
    monkeypatch.setattr(mcap_module, 'open', disk, raising=False)
    assert main(['simulate', 'arm7', '--duration', '5', '--out', str(path), str(tmp_path /
                 'run.npz'), '--no-progress']) == 1
    captured = capsys.readouterr()
    (line,) = [l for l in captured.err.splitlines() if 'recording stopped' in l]
    kept = int(re.search(r'keeps the (\d+) samples', line).group(1))
    assert 'No space left on device' in line and 0 < kept < 5001
    assert 'summary:' in captured.out and 'recorded: %s' % (tmp_path / 'run.npz') in \
        captured.out
    full, whole = load_recording(path), load_recording(tmp_path / 'run.npz')
    assert len(full) == kept and len(whole) == 5001
    np.testing.assert_array_equal(full.position, whole.position[:kept])


def test_numbers_that_overflow_give_one_line_and_no_numpy_warnings(tmp_path):
    """Masses and lengths near the largest float: numpy's RuntimeWarnings reached the user
    (and the joint was taken for massless); now one line names the cause."""
    path = tmp_path / 'huge.urdf'
    path.write_text(
        '<robot name="huge"><link name="a"/><link name="b"><inertial><origin xyz="1e308 0 0"/>'
        '<mass value="1e308"/><inertia ixx="1e308" iyy="1e308" izz="1e308" ixy="0" ixz="0" '
        'iyz="0"/></inertial></link><joint name="j" type="revolute"><parent link="a"/>'
        '<child link="b"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" '
        'velocity="1"/></joint></robot>')
    status, out, err = ros_vi('info', path)
    assert status == 2 and err.count('\n') == 1, err
    assert 'the mass matrix is not finite' in err and 'Warning' not in err


def test_floating_base_from_the_command_line(tmp_path, capsys):
    """``--floating-base`` hangs the root link on a free joint: ``info`` counts its six
    configs; ``simulate`` records the base's pose, which for the quadruped at rest without
    contact falls as one rigid body, z = -g t^2/2."""
    from ros_vi.recording import load_recording
    quadruped = os.path.join(ROOT, 'urdf', 'quadruped.urdf')
    assert main(['info', quadruped, '--floating-base', '--json']) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts['dof'] == 18
    assert [c for c in facts['configs'] if c.startswith('root_joint')] == [
        'root_joint_' + p for p in ('x', 'y', 'z', 'rx', 'ry', 'rz')]
    out = tmp_path / 'drop.npz'
    assert main(['simulate', quadruped, '--floating-base', '--duration', '0.2', '--dt', '0.01',
                 '--no-progress', '--out', str(out)]) == 0
    rec = load_recording(str(out))
    assert rec.bodies == ['trunk']
    z = rec.body_pose[:, 0, 2]
    np.testing.assert_allclose(z, -0.5 * 9.81 * rec.t ** 2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rec.body_pose[:, 0, 3:], [[0, 0, 0, 1]] * len(rec.t),
                               atol=1e-12)
    world = os.path.join(ROOT, 'worlds', 'throw.yaml')
    assert main(['simulate', world, '--floating-base']) == 2
    assert 'in a world file each robot says floating' in capsys.readouterr().err


def test_a_ground_from_the_command_line(tmp_path):
    """``--ground HEIGHT MU``: a floating ball dropped 0.3 m onto the ground rests on it at
    its radius (the recorded base pose)."""
    from ros_vi.recording import load_recording
    ball = tmp_path / 'ball.urdf'
    ball.write_text('<robot name="ball"><link name="ball"><inertial><mass value="1"/>'
                    '<inertia ixx="0.004" iyy="0.004" izz="0.004" ixy="0" ixz="0" iyz="0"/>'
                    '</inertial><collision><geometry><sphere radius="0.1"/></geometry>'
                    '</collision></link></robot>')
    out = tmp_path / 'drop.npz'
    assert main(['simulate', str(ball), '--floating-base', '--ground', '-0.4', '0.8',
                 '--duration', '1.0', '--dt', '0.001', '--no-progress', '--out',
                 str(out)]) == 0
    z = load_recording(str(out)).body_pose[:, 0, 2]
    assert z.min() >= -0.3 - 1e-12 and abs(z[-1] + 0.3) <= 1e-12


def test_a_bouncing_ground_from_the_command_line(tmp_path, capsys):
    """``--ground HEIGHT MU E``: the ball dropped 0.3 m onto a ground of restitution 0.5
    rises again to e^2 of its drop, 0.075 m (0.5 %), at t = 0.371 s; a ``--ground`` of one
    number is a usage error and a restitution outside [0, 1] an error naming it."""
    from ros_vi.recording import load_recording
    ball = tmp_path / 'ball.urdf'
    ball.write_text('<robot name="ball"><link name="ball"><inertial><mass value="1"/>'
                    '<inertia ixx="0.004" iyy="0.004" izz="0.004" ixy="0" ixz="0" iyz="0"/>'
                    '</inertial><collision><geometry><sphere radius="0.1"/></geometry>'
                    '</collision></link></robot>')
    out = tmp_path / 'bounce.npz'
    assert main(['simulate', str(ball), '--floating-base', '--ground', '-0.4', '0.8', '0.5',
                 '--duration', '0.45', '--dt', '0.001', '--no-progress', '--out',
                 str(out)]) == 0
    rec = load_recording(str(out))
    z, t = rec.body_pose[:, 0, 2], rec.t
    after = (t >= 0.3) & (t <= 0.45)
    assert z.min() >= -0.3 - 1e-12
    assert abs(z[after].max() - (-0.3 + 0.25 * 0.3)) <= 0.005 * 0.075
    assert abs(t[after][np.argmax(z[after])] - 0.371) <= 0.002
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(['simulate', str(ball), '--floating-base', '--ground', '-0.4'])
    assert exc.value.code == 2
    assert 'expected HEIGHT MU [E] (2 or 3 numbers), got 1' in capsys.readouterr().err
    assert main(['simulate', str(ball), '--floating-base', '--ground', '-0.4', '0.8', '1.5',
                 '--duration', '0.01', '--no-progress']) != 0
    assert 'restitution must be in [0, 1], got 1.5' in capsys.readouterr().err
