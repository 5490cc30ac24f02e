"""Recordings (ros_vi.recording): what the simulator publishes, written and read back."""
import numpy as np
import pytest

from ros_vi.recording import Recording, load_recording, open_writer, save_recording
from ros_vi.resources import shipped_model
from ros_vi.simulation import Simulation
from ros_vi.urdf import load_urdf_text


def _run(path, ticks=25, model='arm7'):
    """A short free run of a shipped model written to ``path``; returns (writer, states)."""
    text = load_urdf_text(shipped_model(model))
    sim = Simulation.from_urdf(text, rate=200.0, initial_positions={'joint_2': 0.4})
    states = []
    with open_writer(path, text, {'model': model, 'dt': sim.dt}) as writer:
        for k in range(ticks + 1):
            if k:
                sim.set_command_vector(np.full(len(sim.command_joints), 0.5))
                sim.tick()
            state = sim.state()
            writer.append(state, sim.link_transforms())
            states.append(state)
    return writer, states


@pytest.mark.parametrize('suffix', ['.npz', '.csv'])
def test_round_trip_equals_the_published_states(tmp_path, suffix):
    path = tmp_path / ('run' + suffix)
    writer, states = _run(path)
    rec = load_recording(path)
    assert len(rec) == len(states) == 26
    assert rec.joint_names == states[0].joint_names
    np.testing.assert_array_equal(rec.t, [s.t for s in states])
    np.testing.assert_array_equal(rec.position, [s.positions for s in states])
    np.testing.assert_array_equal(rec.velocity, [s.velocities for s in states])
    np.testing.assert_array_equal(rec.effort, [s.efforts for s in states])
    np.testing.assert_array_equal(rec.energy, [s.energy for s in states])
    assert rec.effort[1:].any() and not rec.effort[0].any()
    assert rec.metadata == {'model': 'arm7', 'dt': 0.005}
    if suffix == '.npz':
        assert rec.robot_description == writer.robot_description != ''


def test_unknown_suffix_and_missing_or_corrupt_file_are_named(tmp_path):
    with pytest.raises(ValueError, match=r"run\.txt.*unknown file type '\.txt'"):
        open_writer(tmp_path / 'run.txt')
    with pytest.raises(ValueError, match='no such file'):
        load_recording(tmp_path / 'missing.npz')
    bad = tmp_path / 'bad.csv'
    bad.write_text('time,a\n1,2\n')
    with pytest.raises(ValueError, match=r"bad\.csv.*header"):
        load_recording(bad)
    np.savez(tmp_path / 'other.npz', x=np.zeros(3))
    with pytest.raises(ValueError, match='not a ros_vi recording'):
        load_recording(tmp_path / 'other.npz')


def test_a_failed_write_leaves_no_partial_file(tmp_path):
    rec = Recording(np.zeros(2), ['a'], np.zeros((2, 1)), np.zeros((2, 1)), np.zeros((2, 1)),
                    np.zeros(2), '', {'bad': object()})     # not JSON: the write fails
    with pytest.raises(TypeError):
        save_recording(rec, tmp_path / 'run.npz')
    assert list(tmp_path.iterdir()) == []


def test_written_files_get_the_usual_permissions(tmp_path):
    import os
    path = tmp_path / 'run.npz'
    _run(path, ticks=2)
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~umask


# ------------------------------------------------------------- hostile files (issue #25)
def _npz(path, **changes):
    """The recording of a short arm7 run written as npz, with entries replaced."""
    _run(path)
    with np.load(path, allow_pickle=False) as z:
        entries = {k: z[k] for k in z.files}
    entries.update({k: np.asarray(v) for k, v in changes.items()})
    np.savez(path, **entries)
    return path


@pytest.mark.parametrize('change, message', [
    ({'metadata': '[1, 2]'}, r'metadata is not a mapping of names to values \(\[1, 2\]\)'),
    ({'metadata': '[' * 100_000 + ']' * 100_000}, r'cannot read it as \.npz: nested too '
                                                  r'deeply'),
    ({'metadata': np.array(['a', 'b'])}, r"cannot read it as \.npz: 'metadata' is not text"),
    ({'t': np.r_[0.0, np.nan, np.arange(2, 26) * 0.005]}, r'sample 1 has time nan'),
    ({'t': np.arange(26.0)[::-1]}, r'time goes back at sample 1 \(24\.0 s after 25\.0 s\)'),
    ({'t': np.zeros((26, 2))}, r't is not a list of times \(float64 of shape \(26, 2\)\)'),
    ({'position': np.full((26, 7), np.inf)}, r"position of joint 'joint_1' is inf at t = 0 s"),
    ({'velocity': np.zeros((25, 7))}, r'velocity is float64 of shape \(25, 7\), expected '
                                      r'numbers of shape \(26, 7\)'),
    ({'joint_names': np.array(['joint_1'] * 7)}, r"joint 'joint_1' is named twice"),
    ({'robot_description': np.array([1.0, 2.0])}, r"'robot_description' is not text"),
])
def test_an_odd_npz_recording_is_refused_in_one_line_naming_it(tmp_path, change, message):
    """npz files with odd metadata, inf positions or NaN times gave tracebacks."""
    path = _npz(tmp_path / 'odd.npz', **change)
    with pytest.raises(ValueError, match=r"^recording '%s': .*%s" % (path, message)) as err:
        load_recording(path)
    assert '\n' not in str(err.value) and len(str(err.value)) < 700


def test_a_zip_bomb_or_a_forged_npz_recording_is_refused_unread(tmp_path):
    """A 2 MB npz expanded to 2.3 GB when read: its directory already says so."""
    path = tmp_path / 'bomb.npz'
    np.savez_compressed(path, format=np.array('ros_vi-recording-1'),
                        t=np.zeros(10_000_000))
    with pytest.raises(ValueError, match=r"bomb\.npz': cannot read it as \.npz: array 't' "
                                         r"expands [\d,]+ bytes to 80,000,128"):
        load_recording(path)


def test_a_full_disk_keeps_the_previous_npz_and_says_so(tmp_path, monkeypatch):
    """npz and csv are written atomically: a write that fails (no space left) leaves the
    file that was there, and the error names it in one line."""
    import errno
    path = tmp_path / 'run.npz'
    _run(path)
    before = path.read_bytes()
    real = np.savez

    def full(file, *args, **kwargs):
        real(file, *args, **kwargs)
        raise OSError(errno.ENOSPC, 'No space left on device')
    monkeypatch.setattr(np, 'savez', full)
    with pytest.raises(ValueError, match=r"^recording '.*run\.npz': cannot write it: No "
                                         r"space left on device$"):
        _run(path, ticks=3)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ['run.npz']
