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
