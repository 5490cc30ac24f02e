"""ROS 2 MCAP recordings (ros_vi.recording.mcap), checked with rosbags, an independent reader
that builds its message types from the definitions embedded in the file."""
import os
import re
import sys

import numpy as np
import pytest
from mcap.reader import make_reader
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from ros_vi.conventions import join_ns, pose_to_matrix, time_to_ns
from ros_vi.recording import Recording, load_recording, open_writer, save_recording
from ros_vi.recording.mcap import MESSAGE_DEFINITIONS, TOPICS, McapWriter, message_definition
from ros_vi.resources import shipped_model
from ros_vi.simulation import Simulation
from ros_vi.urdf import load_urdf_text

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICKS = 25


def _simulation(model='arm7', prefix=None):
    text = load_urdf_text(shipped_model(model))
    return text, Simulation.from_urdf(text, rate=200.0, prefix=prefix,
                                      initial_positions={(prefix or '') + 'joint_2': 0.4}
                                      if model == 'arm7' else None)


def _drive(sim, writers, ticks=TICKS, abort_after=None):
    """Tick ``sim`` with a constant torque, appending every state to every writer; returns
    the link transforms of each sample."""
    frames = []
    for k in range(ticks + 1):
        if k:
            sim.set_command_vector(np.full(len(sim.command_joints), 0.5))
            sim.tick()
        state = sim.state()
        frames.append(sim.link_transforms())
        for w in writers:
            w.append(state, frames[-1], sim.static_transforms())
        if abort_after is not None and k + 1 == abort_after:
            raise RuntimeError('the run failed')
    return frames


@pytest.fixture(scope='module')
def run(tmp_path_factory):
    """One arm7 run recorded to .npz and .mcap at once."""
    folder = tmp_path_factory.mktemp('mcap')
    text, sim = _simulation()
    meta = {'model': 'arm7', 'dt': sim.dt, 'controller': 'constant 0.5 N m'}
    npz, mcap = folder / 'run.npz', folder / 'run.mcap'
    with open_writer(npz, text, meta) as w1, open_writer(mcap, text, meta) as w2:
        frames = _drive(sim, [w1, w2])
    return {'npz': npz, 'mcap': mcap, 'urdf': text, 'frames': frames,
            'static': sim.static_transforms(), 'rec': load_recording(npz), 'folder': folder}


def _read_bag(path):
    """{topic: [(log time, message)]} and the connections, decoded by rosbags with types
    built from each connection's embedded definition only."""
    store = get_typestore(Stores.EMPTY)
    out = {}
    with Reader(path) as reader:
        for conn in reader.connections:
            assert conn.msgdef.data, 'no message definition embedded for %s' % conn.topic
            store.register(get_types_from_msg(conn.msgdef.data, conn.msgtype))
        for conn, stamp, raw in reader.messages():
            out.setdefault(conn.topic, []).append(
                (stamp, store.deserialize_cdr(raw, conn.msgtype)))
        return out, {c.topic: c for c in reader.connections}


def _matrix(transform):
    t, r = transform.translation, transform.rotation
    return pose_to_matrix((t.x, t.y, t.z), (r.x, r.y, r.z, r.w))


def _stamp(msg):
    return join_ns(msg.header.stamp.sec, msg.header.stamp.nanosec)


def _assert_tf_equal(messages, frames, stamps):
    assert len(messages) == len(frames)
    for (logged, msg), expected, ns in zip(messages, frames, stamps):
        assert logged == ns
        assert [(t.header.frame_id, t.child_frame_id) for t in msg.transforms] == \
            [(p, c) for p, c, _ in expected]
        for t, (_, _, g) in zip(msg.transforms, expected):
            assert _stamp(t) == ns
            np.testing.assert_allclose(_matrix(t.transform), g, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------- the file itself
def test_rosbags_reads_the_run_equal_to_the_npz(run):
    rec = run['rec']
    bag, conns = _read_bag(run['mcap'])
    n = TICKS + 1
    assert {topic: len(msgs) for topic, msgs in bag.items()} == {
        '/joint_states': n, '/tf': n, '/clock': n, '/energy': n, '/tf_static': 1,
        '/robot_description': 1}
    assert {topic: c.msgtype for topic, c in conns.items()} == \
        {'/' + name: ros_type for name, ros_type in TOPICS.items()}

    stamps = [time_to_ns(t) for t in rec.t]
    js = bag['/joint_states']
    assert [logged for logged, _ in js] == [_stamp(m) for _, m in js] == stamps
    for key in ('position', 'velocity', 'effort'):
        np.testing.assert_array_equal([getattr(m, key) for _, m in js], getattr(rec, key))
    assert all(list(m.name) == rec.joint_names for _, m in js)
    assert rec.effort[1:].any()

    _assert_tf_equal(bag['/tf'], run['frames'], stamps)
    _assert_tf_equal(bag['/tf_static'], [run['static']], stamps[:1])
    assert [join_ns(m.clock.sec, m.clock.nanosec) for _, m in bag['/clock']] == stamps
    assert [logged for logged, _ in bag['/energy']] == stamps
    np.testing.assert_array_equal([m.data for _, m in bag['/energy']], rec.energy)
    assert bag['/robot_description'][0][1].data == run['urdf']


def test_the_file_follows_the_ros2_profile(run):
    with open(run['mcap'], 'rb') as fh:
        reader = make_reader(fh)
        assert reader.get_header().profile == 'ros2'
        summary = reader.get_summary()
        metadata = {m.name: m.metadata for m in reader.iter_metadata()}
    assert {s.encoding for s in summary.schemas.values()} == {'ros2msg'}
    assert {c.message_encoding for c in summary.channels.values()} == {'cdr'}
    assert metadata == {'ros_vi': {'model': '"arm7"', 'dt': '0.005',
                                   'controller': '"constant 0.5 N m"'}}
    # the latched topics are offered transient local, so `ros2 bag play` latches them
    _, conns = _read_bag(run['mcap'])
    durability = {topic: [q.durability.name for q in c.ext.offered_qos_profiles]
                  for topic, c in conns.items()}
    assert durability.pop('/tf_static') == durability.pop('/robot_description') == \
        ['TRANSIENT_LOCAL']
    assert set(map(tuple, durability.values())) == {('VOLATILE',)}


def test_load_recording_of_the_mcap_equals_the_npz(run):
    rec, back = run['rec'], load_recording(run['mcap'])
    assert back.joint_names == rec.joint_names
    assert [time_to_ns(t) for t in back.t] == [time_to_ns(t) for t in rec.t]
    np.testing.assert_allclose(back.t, rec.t, rtol=0, atol=0.5e-9)    # ns stamps
    for key in ('position', 'velocity', 'effort', 'energy'):
        np.testing.assert_array_equal(getattr(back, key), getattr(rec, key))
    assert back.robot_description == rec.robot_description == run['urdf']
    assert back.metadata == rec.metadata


def test_writer_recording_keeps_what_was_appended(tmp_path):
    text, sim = _simulation()
    with McapWriter(tmp_path / 'run.mcap', text) as writer:
        _drive(sim, [writer], ticks=3)
    assert writer.count == 4 and writer.closed
    np.testing.assert_array_equal(writer.recording().position,
                                  load_recording(tmp_path / 'run.mcap').position)


# ---------------------------------------------------------------------- failures
def test_a_writer_abandoned_by_an_exception_leaves_a_readable_mcap(tmp_path):
    text, sim = _simulation()
    path = tmp_path / 'failed.mcap'
    with pytest.raises(RuntimeError, match='the run failed'):
        with open_writer(path, text, {'model': 'arm7'}) as writer:
            writer.metadata['status'] = 'failed at t=0.015 s: the run failed'
            _drive(sim, [writer], abort_after=4)
    rec = load_recording(path)
    assert len(rec) == 4
    np.testing.assert_allclose(rec.t, [0.0, 0.005, 0.01, 0.015], rtol=0, atol=1e-12)
    assert rec.metadata == {'model': 'arm7', 'status': 'failed at t=0.015 s: the run failed'}
    bag, _ = _read_bag(path)
    assert len(bag['/joint_states']) == len(bag['/tf']) == 4


def test_bad_metadata_is_named_and_the_file_is_still_finished(tmp_path):
    text, sim = _simulation('pendulum')
    path = tmp_path / 'run.mcap'
    writer = McapWriter(path, text, {'ok': 1, 'bad': object()})
    writer.append(sim.state())
    with pytest.raises(ValueError, match=r"run\.mcap.*metadata 'bad'"):
        writer.close()
    rec = load_recording(path)
    assert len(rec) == 1 and rec.metadata == {}
    with pytest.raises(ValueError, match='append after close'):
        writer.append(sim.state())


def test_a_sample_before_time_zero_is_refused_and_not_counted(tmp_path):
    text = load_urdf_text(shipped_model('pendulum'))
    sim = Simulation.from_urdf(text, rate=100.0, t0=-0.02)
    with McapWriter(tmp_path / 'early.mcap', text) as writer:
        with pytest.raises(ValueError, match=r"early\.mcap'?: sample time -0\.02 s is before 0"):
            writer.append(sim.state())
        for _ in range(3):
            sim.tick()
        writer.append(sim.state())
    assert writer.count == 1
    assert load_recording(tmp_path / 'early.mcap').t.tolist() == [0.01]


def test_unwritable_path_is_refused_at_once(tmp_path):
    with pytest.raises(ValueError, match=r"no_such_dir/run\.mcap'?: cannot write it"):
        open_writer(tmp_path / 'no_such_dir' / 'run.mcap')
    with pytest.raises(ValueError, match="namespace 'ns/'"):
        McapWriter(tmp_path / 'x.mcap', namespace='ns/')


def test_bad_files_are_named(tmp_path, run):
    with pytest.raises(ValueError, match=r"missing\.mcap.*no such file"):
        load_recording(tmp_path / 'missing.mcap')
    text = tmp_path / 'text.mcap'
    text.write_text('not a bag\n')
    with pytest.raises(ValueError, match=r"text\.mcap.*not an MCAP file"):
        load_recording(text)
    data = run['mcap'].read_bytes()
    for name, cut in (('half.mcap', len(data) // 2), ('tail.mcap', len(data) - 10)):
        (tmp_path / name).write_bytes(data[:cut])
        with pytest.raises(ValueError, match=re.escape(name) + '.*incomplete MCAP'):
            load_recording(tmp_path / name)
    McapWriter(tmp_path / 'empty.mcap', run['urdf']).close()      # no sample: no joint states
    with pytest.raises(ValueError, match=r"empty\.mcap.*no sensor_msgs/msg/JointState topic "
                                         r".*\(topics: /robot_description\)"):
        load_recording(tmp_path / 'empty.mcap')


# ---------------------------------------------------------------------- conversions
def test_save_recording_to_mcap_round_trip_and_tf_from_the_urdf(run, tmp_path):
    rec = run['rec']
    path = tmp_path / 'converted.mcap'
    save_recording(rec, path)
    back = load_recording(path)
    for key in ('position', 'velocity', 'effort', 'energy'):
        np.testing.assert_array_equal(getattr(back, key), getattr(rec, key))
    assert back.metadata == rec.metadata and back.robot_description == rec.robot_description
    bag, _ = _read_bag(path)
    stamps = [time_to_ns(t) for t in rec.t]
    # tf from importing the URDF and evaluating it at the recorded positions: what the
    # simulation published
    _assert_tf_equal(bag['/tf'], run['frames'], stamps)
    _assert_tf_equal(bag['/tf_static'], [run['static']], stamps[:1])
    assert [f for f in os.listdir(tmp_path)] == ['converted.mcap']   # no temporary left


def test_conversion_finds_the_prefix_of_the_joint_names(tmp_path):
    text, sim = _simulation('arm7', prefix='left_')
    with open_writer(tmp_path / 'left.npz', text) as writer:
        frames = _drive(sim, [writer], ticks=2)
    save_recording(load_recording(tmp_path / 'left.npz'), tmp_path / 'left.mcap')
    bag, _ = _read_bag(tmp_path / 'left.mcap')
    assert frames[0][0][:2] == ('left_link_0', 'left_link_1')
    _assert_tf_equal(bag['/tf'], frames, [_stamp(m) for _, m in bag['/joint_states']])


def test_conversion_without_urdf_has_no_tf_and_a_wrong_urdf_is_named(tmp_path):
    rec = Recording(np.array([0.0, 0.1]), ['a', 'b'], np.ones((2, 2)), np.zeros((2, 2)),
                    np.zeros((2, 2)), np.array([1.0, np.nan]), '', {'source': 'hand-made'})
    save_recording(rec, tmp_path / 'plain.mcap')
    bag, _ = _read_bag(tmp_path / 'plain.mcap')
    assert sorted(bag) == ['/clock', '/energy', '/joint_states']
    back = load_recording(tmp_path / 'plain.mcap')
    np.testing.assert_array_equal(back.energy, rec.energy)
    assert back.joint_names == ['a', 'b'] and back.metadata == rec.metadata
    rec.robot_description = load_urdf_text(shipped_model('pendulum'))
    with pytest.raises(ValueError, match="joints theta that the recording does not have"):
        save_recording(rec, tmp_path / 'wrong.mcap')
    assert not (tmp_path / 'wrong.mcap').exists()


def test_a_bag_from_another_writer_loads(tmp_path):
    """An MCAP written by rosbags (as `ros2 bag record` would: receive-time log times,
    namespaced topic, positions only, no energy, no ros_vi metadata)."""
    store = get_typestore(Stores.ROS2_JAZZY)
    JointState = store.types['sensor_msgs/msg/JointState']
    Header = store.types['std_msgs/msg/Header']
    Time = store.types['builtin_interfaces/msg/Time']
    folder = tmp_path / 'bag'
    stamps = [(5, 0), (5, 20_000_000), (5, 40_000_000)]
    with Writer(folder, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection('/robot1/joint_states', JointState.__msgtype__,
                                     typestore=store)
        for k, (sec, nanosec) in enumerate(stamps):
            msg = JointState(header=Header(stamp=Time(sec=sec, nanosec=nanosec), frame_id=''),
                             name=['j1', 'j2'], position=np.array([0.1 * k, -0.2 * k]),
                             velocity=np.array([], dtype=float),
                             effort=np.array([], dtype=float))
            writer.write(conn, 1_700_000_000_000_000_000 + k,
                         store.serialize_cdr(msg, JointState.__msgtype__))
    (path,) = folder.glob('*.mcap')
    rec = load_recording(path)
    assert rec.joint_names == ['j1', 'j2']
    np.testing.assert_allclose(rec.t, [5.0, 5.02, 5.04], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(rec.position, [[0.0, 0.0], [0.1, -0.2], [0.2, -0.4]])
    assert np.isnan(rec.velocity).all() and np.isnan(rec.effort).all()
    assert np.isnan(rec.energy).all()
    assert rec.robot_description == '' and rec.metadata == {}


# ---------------------------------------------------------------------- definitions
def _msg_file(ros_type):
    """The .msg file the ROS 2 wheels (or, for tf2_msgs, ros_interfaces/) install."""
    pkg, _, name = ros_type.split('/')
    prefixes = [p for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    candidates = [os.path.join(p, 'share', pkg, 'msg', name + '.msg')
                  for p in prefixes + [sys.prefix]]
    candidates.append(os.path.join(ROOT, 'ros_interfaces', pkg, 'msg', name + '.msg'))
    for path in candidates:
        if os.path.isfile(path):
            return path
    raise AssertionError('no %s.msg in %s' % (ros_type, ', '.join(candidates)))


def _fields(text):
    """(type, name, default) per field line: comments, blank lines and spacing dropped."""
    out = []
    for line in text.splitlines():
        line = line.split('#', 1)[0].strip()
        if line:
            out.append(tuple(line.split(None, 2)))
    return out


@pytest.mark.parametrize('ros_type', sorted(MESSAGE_DEFINITIONS))
def test_message_definitions_match_the_installed_msg_files(ros_type):
    with open(_msg_file(ros_type), encoding='utf-8') as fh:
        installed = _fields(fh.read())
    assert _fields(MESSAGE_DEFINITIONS[ros_type]) == installed


def test_embedded_definitions_give_the_standard_types():
    """Each topic's concatenated definition, parsed by rosbags, gives the same fields as
    rosbags' own Jazzy types."""
    jazzy = get_typestore(Stores.ROS2_JAZZY)
    for ros_type in set(TOPICS.values()):
        parsed = get_types_from_msg(message_definition(ros_type), ros_type)
        assert set(parsed) >= {ros_type}
        for name, fields in parsed.items():
            assert fields == jazzy.fielddefs[name], name


# ---------------------------------------------------------------------- helpers used here
def test_link_transforms_at_is_the_published_pose_and_leaves_the_state(run):
    text, sim = _simulation()
    for _ in range(3):
        sim.tick()
    state = sim.state()
    before = sim.link_transforms()
    at = sim.link_transforms_at(state.positions)
    assert [(p, c) for p, c, _ in at] == [(p, c) for p, c, _ in before]
    for (_, _, g1), (_, _, g2) in zip(at, before):
        np.testing.assert_array_equal(g1, g2)
    sim.link_transforms_at(np.zeros(len(sim.joint_names)))
    assert sim.state() is state
    for (_, _, g1), (_, _, g2) in zip(sim.link_transforms(), before):
        np.testing.assert_array_equal(g1, g2)
    with pytest.raises(ValueError, match='link_transforms_at: positions: expected 7 values'):
        sim.link_transforms_at([0.0])



# ------------------------------------------------------------- hostile files (issue #25)
def _write_raw(path, messages, chunk_size=1024 * 1024):
    """An MCAP written with mcap's own Writer: ``messages`` [(topic, ROS type, log time,
    CDR bytes)] with ros_vi's schemas (the payloads as given, damaged or not)."""
    from mcap.well_known import MessageEncoding, Profile, SchemaEncoding
    from mcap.writer import Writer
    with open(path, 'wb') as fh:
        writer = Writer(fh, chunk_size=chunk_size)
        writer.start(profile=Profile.ROS2, library='test')
        channels = {}
        for topic, ros_type, ns, data in messages:
            if topic not in channels:
                schema = writer.register_schema(ros_type, SchemaEncoding.ROS2,
                                                message_definition(ros_type).encode())
                channels[topic] = writer.register_channel(topic, MessageEncoding.CDR, schema)
            writer.add_message(channels[topic], log_time=ns, data=data, publish_time=ns)
        writer.finish()


def _joint_states_cdr(k):
    from mcap_ros2._dynamic import serialize_dynamic
    ros_type = 'sensor_msgs/msg/JointState'
    encode = serialize_dynamic(ros_type, message_definition(ros_type))[ros_type]
    return encode({'header': {'stamp': {'sec': 0, 'nanosec': 10_000_000 * k}, 'frame_id': ''},
                   'name': ['a', 'b'], 'position': [0.1 * k, 0.2], 'velocity': [0.0, 0.0],
                   'effort': [0.0, 0.0]})


def test_an_mcap_with_one_message_cut_short_is_named_in_one_line(tmp_path, capsys):
    """One joint_states payload shorter than its fields: struct.error tracebacks in plot,
    animate and view; now one line naming the message."""
    from ros_vi.cli import main
    messages = [('/joint_states', 'sensor_msgs/msg/JointState', 10_000_000 * k,
                 _joint_states_cdr(k)) for k in range(5)]
    topic, ros_type, ns, data = messages[3]
    messages[3] = (topic, ros_type, ns, data[:-12])
    path = tmp_path / 'cut.mcap'
    _write_raw(path, messages)
    message = (r"recording '.*cut\.mcap': /joint_states message 3 \(log time 0\.030000000 s\) "
               r"cannot be decoded: ")
    with pytest.raises(ValueError, match=message):
        load_recording(path)
    for command in (['plot', str(path)], ['animate', str(path), '--model', 'pendulum']):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.count('\n') == 1 and re.search(message, err), err


def test_an_mcap_with_a_damaged_chunk_or_a_decompression_bomb_is_refused(tmp_path, run):
    data = bytearray(run['mcap'].read_bytes())
    data[200] ^= 0xFF                              # inside the first chunk's data
    path = tmp_path / 'flipped.mcap'
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"flipped\.mcap': damaged: "):
        load_recording(path)
    bomb = tmp_path / 'bomb.mcap'
    _write_raw(bomb, [('/robot_description', 'std_msgs/msg/String', 0,
                       b'\x00\x01\x00\x00' + (8_000_000).to_bytes(4, 'little') +
                       b' ' * 8_000_000)], chunk_size=16 * 1024 * 1024)
    assert bomb.stat().st_size < 10_000
    with pytest.raises(ValueError, match=r"bomb\.mcap': a chunk expands [\d,]+ bytes to "
                                         r"[\d,]+, more than 200 times"):
        load_recording(bomb)


class _Disk:
    """A file on a disk with room for ``capacity`` bytes: a write beyond them raises
    OSError(ENOSPC) after writing what fits; truncating frees the space again."""

    def __init__(self, path, capacity):
        self.file = open(path, 'wb', buffering=0)
        self.capacity = capacity

    def write(self, data):
        import errno
        room = self.capacity - self.file.tell()
        if room <= 0:
            raise OSError(errno.ENOSPC, 'No space left on device')
        return self.file.write(bytes(memoryview(data)[:room]))

    def __getattr__(self, name):            # tell, seek, truncate, flush, close
        return getattr(self.file, name)


def test_a_recording_cut_by_a_full_disk_is_readable_up_to_the_failure(tmp_path, monkeypatch):
    """The writer that meets a full disk ends the file after its last whole chunk (the
    partial one cut off, metadata and footer written in its room): load_recording reads
    every sample up to there, where it refused the file as incomplete."""
    import builtins
    from ros_vi.recording import mcap as mcap_module
    text, sim = _simulation()
    path = tmp_path / 'full.mcap'
    monkeypatch.setattr(mcap_module, 'open', lambda name, mode, **kw: _Disk(name, 600_000),
                        raising=False)
    writer = McapWriter(path, text, {'model': 'arm7'})
    monkeypatch.setattr(mcap_module, 'open', builtins.open, raising=False)
    states = []
    with pytest.raises(ValueError, match=r"full\.mcap': cannot write it: No space left on "
                                         r"device; the file keeps the (\d+) samples") as err:
        for k in range(20_000):
            if k:
                sim.tick()
            states.append(sim.state())
            writer.append(states[-1], sim.link_transforms(),
                          sim.static_transforms() if k == 0 else None)
    kept = int(re.search(r'keeps the (\d+) samples', str(err.value)).group(1))
    assert 0 < kept < len(states)
    with pytest.raises(ValueError, match=r'keeps the %d samples written before' % kept):
        writer.close()
    assert path.stat().st_size <= 600_000
    rec = load_recording(path)
    assert len(rec) == kept and rec.metadata == {'model': 'arm7'}
    np.testing.assert_array_equal(rec.position, [s.positions for s in states[:kept]])
    assert rec.robot_description == text
