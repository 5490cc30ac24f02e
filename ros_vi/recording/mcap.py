"""Recordings as ROS 2 bags: MCAP files (profile ``ros2``, CDR messages, ``ros2msg`` schemas).

What is in a ros_vi MCAP (topic names under the writer's ``namespace``, '' by default):

========================  ===========================  ======================================
topic                     type                         when
========================  ===========================  ======================================
``/joint_states``         sensor_msgs/msg/JointState   every sample: the recording's row
                                                       (configs, then mimic joints),
                                                       ``header.stamp`` = sample time
``/tf``                   tf2_msgs/msg/TFMessage       every sample given transforms: moving
                                                       joints, parent link -> child link;
                                                       every sample: each free body (a
                                                       floating base), parent -> body
``/tf_static``            tf2_msgs/msg/TFMessage       once (fixed joints), transient local
``/clock``                rosgraph_msgs/msg/Clock      every sample (unless ``clock=False``)
``/robot_description``    std_msgs/msg/String          once, if the URDF is known,
                                                       transient local
``/energy``               std_msgs/msg/Float64         every sample: total energy T + V [J]
========================  ===========================  ======================================

A free body's parent frame is the one the transforms given with the first sample name
for it (the simulator node's ``odom_frame``), else its free joint's parent frame, and is
kept in the metadata as ``free_bodies`` ({body: parent frame}); reading a file back takes
the bodies' poses from ``/tf`` (:attr:`~ros_vi.recording.Recording.body_pose`).

Times are **simulation time**: every message's log and publish time is its sample time in
integer nanoseconds, as in a bag recorded with ``use_sim_time`` (so a run starting at t = 0
is dated 1970-01-01 by tools that show dates).  ``/energy`` has no header: its log time is
the stamp of the joint state it belongs to.  The recording's metadata is an MCAP metadata
record named ``ros_vi``, each value JSON-encoded.  The message definitions are embedded
(one schema per type, the ``.msg`` text with its ``MSG: pkg/Type`` sections), and every
channel carries ``offered_qos_profiles`` as ``ros2 bag record`` writes them (integer QoS
enums, which rosbag2 reads from Humble on), so ``ros2 bag play`` offers ``/tf_static`` and
``/robot_description`` latched.

No ROS installation is needed: messages are plain dicts serialised with the ``mcap`` and
``mcap-ros2-support`` packages.  docs/recording.md shows how to open the files.
"""
import json
import os
import struct

import numpy as np
import zstandard
from mcap.exceptions import (EndOfFile, McapError, RecordLengthLimitExceeded,
                             UnsupportedCompressionError)
from mcap.data_stream import RecordBuilder
from mcap.records import Channel, Chunk, DataEnd, Footer, Message, Metadata, Schema
from mcap.stream_reader import CRCValidationError, StreamReader, breakup_chunk
from mcap.well_known import MessageEncoding, Profile, SchemaEncoding
from mcap.writer import CompressionType, Writer
from mcap_ros2.decoder import DecoderFactory
# mcap_ros2's own Writer registers channels without metadata, and the ros2 profile wants
# offered_qos_profiles on each; so the file is written with mcap's Writer and only the
# CDR encoder comes from mcap_ros2 (test/test_recording_mcap.py checks both halves)
from mcap_ros2._dynamic import serialize_dynamic

from ..bounded import MAX_ARRAY_BYTES, check_expansion
from ..conventions import join_ns, matrix_to_pose, pose_to_matrix, split_ns, time_to_ns
from ..errors import name_list, shorten
from .samples import Recording, RecordingWriter, atomic_write

__all__ = ['McapWriter', 'write_recording', 'read_recording', 'MESSAGE_DEFINITIONS',
           'message_definition', 'TOPICS', 'METADATA_NAME']

METADATA_NAME = 'ros_vi'

# {topic (relative to the namespace): ROS type}
TOPICS = {
    'joint_states': 'sensor_msgs/msg/JointState',
    'tf': 'tf2_msgs/msg/TFMessage',
    'tf_static': 'tf2_msgs/msg/TFMessage',
    'clock': 'rosgraph_msgs/msg/Clock',
    'robot_description': 'std_msgs/msg/String',
    'energy': 'std_msgs/msg/Float64',
}

# The fields of every type used (the .msg files without comments; a type without a package
# is in the package of the message that names it, as in the .msg files).
MESSAGE_DEFINITIONS = {
    'sensor_msgs/msg/JointState': (
        'std_msgs/Header header\n'
        'string[] name\n'
        'float64[] position\n'
        'float64[] velocity\n'
        'float64[] effort\n'),
    'std_msgs/msg/Header': (
        'builtin_interfaces/Time stamp\n'
        'string frame_id\n'),
    'builtin_interfaces/msg/Time': (
        'int32 sec\n'
        'uint32 nanosec\n'),
    'tf2_msgs/msg/TFMessage': (
        'geometry_msgs/TransformStamped[] transforms\n'),
    'geometry_msgs/msg/TransformStamped': (
        'std_msgs/Header header\n'
        'string child_frame_id\n'
        'Transform transform\n'),
    'geometry_msgs/msg/Transform': (
        'Vector3 translation\n'
        'Quaternion rotation\n'),
    'geometry_msgs/msg/Vector3': (
        'float64 x\n'
        'float64 y\n'
        'float64 z\n'),
    'geometry_msgs/msg/Quaternion': (
        'float64 x 0\n'
        'float64 y 0\n'
        'float64 z 0\n'
        'float64 w 1\n'),
    'rosgraph_msgs/msg/Clock': (
        'builtin_interfaces/Time clock\n'),
    'std_msgs/msg/String': (
        'string data\n'),
    'std_msgs/msg/Float64': (
        'float64 data\n'),
}

_SEPARATOR = '=' * 80


def _field_types(ros_type):
    """The message types named by the fields of ``ros_type`` (full names, in field order)."""
    package = ros_type.split('/')[0]
    out = []
    for line in MESSAGE_DEFINITIONS[ros_type].splitlines():
        base = line.split()[0].split('[')[0]
        if base[:1].isupper() or '/' in base:
            pkg, _, name = base.rpartition('/')
            out.append('%s/msg/%s' % (pkg or package, name))
    return out


def message_definition(ros_type):
    """The schema text of ``ros_type`` ('pkg/msg/Type') as rosbag2 embeds it: its fields,
    then each type it uses (depth first, once each) after a line of '=' and ``MSG: pkg/Type``.
    """
    order, stack = [], list(reversed(_field_types(ros_type)))
    while stack:
        dep = stack.pop()
        if dep not in order:
            order.append(dep)
            stack.extend(reversed(_field_types(dep)))
    parts = [MESSAGE_DEFINITIONS[ros_type]]
    for dep in order:
        pkg, _, name = dep.split('/')
        parts.append('%s\nMSG: %s/%s\n%s' % (_SEPARATOR, pkg, name, MESSAGE_DEFINITIONS[dep]))
    return ''.join(parts)


def _qos_profile(latched):
    """``offered_qos_profiles`` of a channel, as rosbag2 writes it: a YAML list with one
    profile, enums as rmw's integers (keep last 1; reliable 1; transient local 1 or volatile
    2; liveliness automatic 1), durations 0 = unspecified."""
    depth, durability = (1, 1) if latched else (10, 2)
    zero = '{sec: 0, nsec: 0}'
    return ('- history: 1\n  depth: %d\n  reliability: 1\n  durability: %d\n'
            '  deadline: %s\n  lifespan: %s\n  liveliness: 1\n'
            '  liveliness_lease_duration: %s\n  avoid_ros_namespace_conventions: false\n'
            % (depth, durability, zero, zero, zero))


def _namespace(namespace):
    namespace = (namespace or '').strip()
    if namespace and (not namespace.startswith('/') or namespace.endswith('/')
                      or '//' in namespace or ' ' in namespace):
        raise ValueError("namespace %r: expected '' or '/name' (no trailing '/')" % namespace)
    return namespace


def _stamp(ns):
    sec, nanosec = split_ns(ns)
    return {'sec': sec, 'nanosec': nanosec}


def _transform_msgs(transforms, stamp):
    out = []
    for parent, child, g in transforms:
        (x, y, z), (qx, qy, qz, qw) = matrix_to_pose(g)
        out.append({'header': {'stamp': stamp, 'frame_id': parent}, 'child_frame_id': child,
                    'transform': {'translation': {'x': x, 'y': y, 'z': z},
                                  'rotation': {'x': qx, 'y': qy, 'z': qz, 'w': qw}}})
    return out


def _floats(values):
    return [float(v) for v in values]


class McapWriter(RecordingWriter):
    """Streams a recording into a ROS 2 MCAP file (the module doc lists the topics).

    The file is created at construction (ValueError naming it if it cannot be) and every
    :meth:`append` writes at once; :meth:`close` (called by the ``with`` block, also when an
    exception leaves it) finishes the file (summary, metadata, footer), so a run that fails
    keeps a valid MCAP of what it recorded.  :meth:`recording` gives the samples appended so
    far, as for every :class:`RecordingWriter`.

    A write that fails (a full disk: OSError) makes :meth:`append` raise ValueError naming
    the file and the reason; the file then ends after the last chunk written whole (the
    partial one is cut off, the metadata and a footer written in the space it took), so it
    stays readable with every sample up to there (the last chunk's, at most 1 MiB of
    messages, are lost); :meth:`close` raises ValueError saying what was kept.

    path: the .mcap file; robot_description: URDF text ('' for none); metadata: ``{str:
    JSON-able}``, written at close (keys added before :meth:`close` are kept, e.g. a final
    ``status``); namespace: prefix of every topic ('' or '/name'); clock: write ``/clock``.
    stream: an open binary file to write into instead of opening ``path`` (then ``path`` only
    names the recording in messages, and the caller closes the stream).
    """

    def __init__(self, path, robot_description='', metadata=None, namespace='', clock=True,
                 stream=None):
        super().__init__(path, robot_description, metadata)
        self.namespace = _namespace(namespace)
        self.clock = bool(clock)
        self._own_stream = stream is None
        if stream is None:
            try:
                stream = open(self.path, 'wb', buffering=0)     # no buffer to fail later
            except OSError as err:
                raise ValueError('recording %r: cannot write it: %s'
                                 % (self.path, err.strerror or err)) from None
        self._stream = stream
        self._out = _Output(stream)
        self._good = self._out.offset   # bytes of whole records in the file
        self._failure = None            # the OSError that stopped the writing
        self._kept = (0, None)          # joint states in whole chunks on disk, last time
        self._written = (0, None)       # joint states given to the MCAP writer, last time
        self._mcap = Writer(self._out, compression=CompressionType.ZSTD)
        self._guarded(lambda: self._mcap.start(profile=Profile.ROS2, library='ros_vi'))
        self._schemas = {}      # ROS type -> (schema id, CDR encoder)
        self._channels = {}     # topic -> (channel id, encoder, messages written)
        self._started = False

    def _topic(self, name):
        return '%s/%s' % (self.namespace, name)

    def _write(self, name, message, ns):
        topic = self._topic(name)
        entry = self._channels.get(topic)
        if entry is None:
            ros_type = TOPICS[name]
            if ros_type not in self._schemas:
                schema_id = self._mcap.register_schema(
                    ros_type, SchemaEncoding.ROS2, message_definition(ros_type).encode())
                encoder = serialize_dynamic(ros_type, message_definition(ros_type))[ros_type]
                self._schemas[ros_type] = (schema_id, encoder)
            schema_id, encoder = self._schemas[ros_type]
            latched = name in ('tf_static', 'robot_description')
            channel_id = self._mcap.register_channel(
                topic, MessageEncoding.CDR, schema_id,
                {'offered_qos_profiles': _qos_profile(latched)})
            entry = self._channels[topic] = [channel_id, encoder, 0]
        channel_id, encoder, count = entry
        data = encoder(message)
        if name == 'joint_states':      # in the chunk that this message may complete
            self._written = (self._written[0] + 1, ns / 1e9)
        self._guarded(lambda: self._mcap.add_message(channel_id, log_time=ns, data=data,
                                                     publish_time=ns, sequence=count))
        entry[2] = count + 1

    def _start(self, ns, static_transforms):
        """The once-only topics, dated ``ns`` [ns]: robot_description, tf_static."""
        self._started = True
        if self.robot_description:
            self._write('robot_description', {'data': self.robot_description}, ns)
        if static_transforms:
            self._write('tf_static', {'transforms': _transform_msgs(static_transforms,
                                                                   _stamp(ns))}, ns)

    def _sample_ns(self, t):
        ns = time_to_ns(t)
        if ns < 0:
            raise ValueError('recording %r: sample time %r s is before 0 (MCAP log times are '
                             'unsigned nanoseconds)' % (self.path, float(t)))
        return ns

    def _write_sample(self, t, names, position, velocity, effort, energy, transforms=None,
                      static_transforms=None):
        """One sample: t [s]; names, position, velocity, effort (nj,) in joint_states order;
        energy [J]; transforms / static_transforms ``[(parent, child, (4, 4))]``."""
        ns = self._sample_ns(t)
        if not self._started:
            self._start(ns, static_transforms)
        stamp = _stamp(ns)
        self._write('joint_states', {
            'header': {'stamp': stamp, 'frame_id': ''}, 'name': list(names),
            'position': _floats(position), 'velocity': _floats(velocity),
            'effort': _floats(effort)}, ns)
        if transforms:
            self._write('tf', {'transforms': _transform_msgs(transforms, stamp)}, ns)
        if self.clock:
            self._write('clock', {'clock': stamp}, ns)
        self._write('energy', {'data': float(energy)}, ns)

    def append(self, state, transforms=None, static_transforms=None):
        """Write the :class:`~ros_vi.simulation.SimState` ``state`` now: joint_states,
        energy, clock, and ``transforms`` (``[(parent, child, (4, 4) pose of child in
        parent)]``, :meth:`ros_vi.simulation.Simulation.link_transforms`) on tf.  The first
        call also writes robot_description and ``static_transforms`` on tf_static."""
        if self.closed:
            raise ValueError('recording %r: append after close' % self.path)
        self._sample_ns(state.t)       # refused before the sample is counted
        if state.bodies and self._bodies is None:
            given = {c: p for p, c, _ in transforms or []}
            self.metadata.setdefault('free_bodies', {b.name: given.get(b.name, b.parent)
                                                     for b in state.bodies})
        super().append(state)
        # each free body on tf, unless the transforms have it already (the node's odom)
        have = {c for _, c, _ in transforms or []}
        parents = self.metadata['free_bodies'] if state.bodies else {}
        extra = [(parents[b.name], b.name, b.pose) for b in state.bodies if b.name not in have]
        if extra:
            transforms = extra + list(transforms or [])
        self._write_sample(self._t[-1], self._names, self._pos[-1], self._vel[-1],
                           self._eff[-1], self._energy[-1], transforms, static_transforms)

    def _guarded(self, write):
        """``write()`` to the file; an OSError (a full disk) stops the recording: ValueError
        naming the file.  After a whole write, everything in the file is whole records."""
        if self._failure is not None:
            raise ValueError(self._stopped())
        try:
            write()
        except OSError as err:
            self._failure = err
            raise ValueError(self._stopped()) from None
        if self._out.offset != self._good:
            self._good, self._kept = self._out.offset, self._written

    def _stopped(self):
        why = 'recording %r: cannot write it: %s' % (self.path, self._failure.strerror or
                                                     self._failure)
        if not self._own_stream:        # the caller's stream (an atomic write): not kept
            return why
        count, t = self._kept
        return '%s; the file keeps the %d samples written before%s' % (
            why, count, '' if t is None else ' (up to t = %.9g s)' % t)

    def _metadata(self):
        """``({key: JSON text}, error or None)``: the metadata as written, without the
        values that are not JSON-able (the error names the first)."""
        encoded, error = {}, None
        for key, value in self.metadata.items():
            try:
                encoded[str(key)] = json.dumps(value)
            except (TypeError, ValueError) as err:
                if error is None:
                    error = ValueError('recording %r: metadata %r: %s' % (self.path, key, err))
        return encoded, error

    def close(self):
        """Finish the file (idempotent).  A metadata value that is not JSON-able raises
        ValueError naming its key, after the file is finished without the metadata.  After a
        failed write the file is ended after its last whole chunk (class doc) and ValueError
        says what it keeps."""
        if self.closed:
            return
        self.closed = True
        encoded, error = self._metadata()
        try:
            if self._failure is None:
                try:
                    if not self._started:
                        self._start(0, None)
                    if error is None:
                        self._guarded(lambda: self._mcap.add_metadata(METADATA_NAME, encoded))
                    self._guarded(self._mcap.finish)
                except ValueError:
                    if self._failure is None:
                        raise
            if self._failure is not None:
                self._end_after_whole_chunks({} if error is not None else encoded)
                raise ValueError(self._stopped())
            if error is not None:
                raise error
        finally:
            if self._own_stream:
                self._stream.close()

    def _end_after_whole_chunks(self, encoded):
        """After a failed write: cut the file after its last whole record and end it there
        (metadata, data end, a footer without summary, the magic), which a full disk has
        room for once the partial chunk is cut off."""
        if not self._own_stream:
            return              # the caller's stream (an atomic write): it is deleted
        builder = RecordBuilder()
        Metadata(METADATA_NAME, encoded).write(builder)
        with_metadata = builder.end()
        DataEnd(0).write(builder)
        Footer(summary_start=0, summary_offset_start=0, summary_crc=0).write(builder)
        end = builder.end() + _MAGIC
        for tail in (with_metadata + end, end):
            try:
                self._stream.truncate(self._good)
                self._stream.seek(self._good)
                _Output(self._stream).write(tail)
                return
            except OSError:
                continue


class _Output:
    """The file an McapWriter writes through: each write reaches the file whole (a raw file
    may take part of it at a time) before the next, and ``offset`` counts the bytes
    written, so after a failed write the bytes before ``offset`` are known to be there."""

    def __init__(self, stream):
        self.stream = stream
        self.offset = stream.tell()

    def write(self, data):
        view = memoryview(data).cast('B')
        while view.nbytes:
            n = self.stream.write(view)
            if not n:
                raise OSError('the file takes no more bytes')
            self.offset += n
            view = view[n:]
        return len(data)

    def tell(self):
        return self.offset

    def flush(self):
        self.stream.flush()


class _RecordedRobot:
    """Link transforms of a recording's robot at its recorded positions: the URDF imported
    with the prefix the recording's joint names carry, and a Simulation's link transforms
    (the ones the simulator publishes) evaluated at each row."""

    def __init__(self, rec):
        from ..simulation import Simulation
        from ..urdf import import_urdf
        names = [c.name for c in import_urdf(rec.robot_description).configs]
        prefix = _joint_prefix(names, rec.joint_names)
        if prefix is None:
            missing = [n for n in names if n not in rec.joint_names]
            raise ValueError('the recording\'s robot_description has joints %s that the '
                             'recording does not have (it has %s)'
                             % (', '.join(missing), ', '.join(rec.joint_names)))
        self.sim = Simulation.from_urdf(rec.robot_description, prefix=prefix or None)
        self.columns = [rec.joint_names.index(n) for n in self.sim.joint_state_names]

    def transforms(self, position_row):
        return self.sim.link_transforms_at(np.asarray(position_row)[self.columns])


def _joint_prefix(urdf_names, recorded_names):
    """The prefix p with p + name in ``recorded_names`` for every URDF config name, or
    None."""
    if not urdf_names:
        return ''
    first = urdf_names[0]
    for name in recorded_names:
        if name.endswith(first):
            prefix = name[:len(name) - len(first)]
            if all(prefix + n in recorded_names for n in urdf_names):
                return prefix
    return None


def write_recording(rec, path):
    """Write the :class:`~ros_vi.recording.Recording` ``rec`` to ``path`` as a ROS 2 MCAP
    (atomically: a temporary file renamed into place).  With a URDF
    (``rec.robot_description``), ``/tf`` and ``/tf_static`` come from importing it and
    evaluating the link transforms at each sample's positions; without one there is no tf.
    """
    path = os.fspath(path)
    robot = _RecordedRobot(rec) if rec.robot_description.strip() else None

    metadata = dict(rec.metadata)
    parents = {}
    if rec.bodies:
        given = metadata.get('free_bodies', {})
        parents = metadata['free_bodies'] = {b: given.get(b, 'world') for b in rec.bodies}

    def write(tmp):
        with open(tmp, 'wb') as fh, \
                McapWriter(path, rec.robot_description, metadata, stream=fh) as writer:
            static = robot.sim.static_transforms() if robot is not None else None
            for k in range(len(rec)):
                transforms = [(parents[b], b, pose_to_matrix(x[:3], x[3:]))
                              for b, x in zip(rec.bodies, rec.body_pose[k])]
                if robot is not None:
                    transforms += robot.transforms(rec.position[k])
                writer._write_sample(
                    rec.t[k], rec.joint_names, rec.position[k], rec.velocity[k],
                    rec.effort[k], rec.energy[k], transforms or None, static)
    atomic_write(path, write)


# ---------------------------------------------------------------------- reading
def _find_joint_states(channels, schemas):
    """The joint_states topic: '/joint_states', else the only '<ns>/joint_states'."""
    candidates = sorted(c.topic for c in channels.values()
                        if c.topic.endswith('/joint_states') and c.schema_id in schemas
                        and schemas[c.schema_id].name == 'sensor_msgs/msg/JointState')
    if '/joint_states' in candidates:
        return '/joint_states'
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise ValueError('no sensor_msgs/msg/JointState topic named .../joint_states (topics: '
                         '%s)' % name_list(sorted(c.topic for c in channels.values()),
                                           quote=str))
    raise ValueError('several joint_states topics (%s); which one is ambiguous'
                     % name_list(candidates, quote=str))


def _joint_table(path, samples):
    """Arrays (N, nj) from joint_states messages whose name lists may differ (a bag with
    several publishers): the joints in order of first appearance, nan where a message does
    not carry a joint or leaves an array empty."""
    names = []
    index = {}
    for _, msg in samples:
        for name in msg.name:
            if name not in index:
                index[name] = len(names)
                names.append(name)
    n = len(samples)
    if 3 * 8 * n * len(names) > MAX_ARRAY_BYTES:
        raise ValueError('recording %r: %s joint_states messages naming %s joints would need '
                         'more than %s bytes (MAX_ARRAY_BYTES)'
                         % (path, format(n, ','), format(len(names), ','),
                            format(MAX_ARRAY_BYTES, ',')))
    arrays = {key: np.full((n, len(names)), np.nan) for key in ('position', 'velocity',
                                                                'effort')}
    for k, (_, msg) in enumerate(samples):
        cols = [index[name] for name in msg.name]
        for key, out in arrays.items():
            values = getattr(msg, key)
            if len(values) == 0:
                continue
            if len(values) != len(cols):
                raise ValueError('recording %r: joint_states message %d has %d names but %d '
                                 '%s values' % (path, k, len(cols), len(values), key))
            out[k, cols] = values
    return names, arrays


_MAGIC = b'\x89MCAP0\r\n'
_INCOMPLETE = ('an incomplete MCAP: it ends before its footer (cut short, or its writer was '
               'killed; `mcap recover` can salvage the messages)')


class _TooLarge(ValueError):
    """An MCAP over a limit of :mod:`ros_vi.bounded`."""


class _Contents:
    """What :func:`read_recording` takes from an MCAP, read record by record from the start
    (no index is trusted): schemas and channels by id, the messages ``[(log time, order,
    channel id, data)]`` of the wanted channels, the ``ros_vi`` metadata.  Chunks are
    decompressed within :data:`~ros_vi.bounded.MAX_ARRAY_BYTES` in all and
    :data:`~ros_vi.bounded.MAX_EXPANSION` times their size, with their CRCs checked."""

    def __init__(self, fh, size):
        self.schemas, self.channels, self.messages, self.metadata = {}, {}, [], {}
        self._expanded = 0
        reader = StreamReader(fh, emit_chunks=True, validate_crcs=True,
                              record_size_limit=max(size, 1))
        try:
            for record in reader.records:
                if isinstance(record, Chunk):
                    for inner in self._chunk(record):
                        self._take(inner)
                else:
                    self._take(record)
        except (EndOfFile, RecordLengthLimitExceeded):   # a record longer than the file
            raise ValueError(_INCOMPLETE) from None
        except UnsupportedCompressionError as err:
            raise ValueError('cannot read it: %s' % err) from None
        except _TooLarge:
            raise
        except (McapError, CRCValidationError, struct.error, zstandard.ZstdError,
                UnicodeDecodeError, ValueError, KeyError, IndexError) as err:
            if fh.tell() >= size:      # ran out of bytes: a record (or chunk) cut short
                raise ValueError(_INCOMPLETE) from None
            raise ValueError('damaged: %s at byte %s (%s)'
                             % (type(err).__name__, format(fh.tell(), ','),
                                shorten(str(err) or 'no detail', quote=False))) from None

    def _chunk(self, chunk):
        self._expanded += chunk.uncompressed_size
        try:
            if self._expanded > MAX_ARRAY_BYTES:
                raise ValueError('its chunks hold more than %s bytes (MAX_ARRAY_BYTES)'
                                 % format(MAX_ARRAY_BYTES, ','))
            check_expansion(len(chunk.data), chunk.uncompressed_size, 'a chunk')
        except ValueError as err:
            raise _TooLarge(str(err)) from None
        return breakup_chunk(chunk, validate_crc=True)

    def _take(self, record):
        if isinstance(record, Schema):
            self.schemas[record.id] = record
        elif isinstance(record, Channel):
            self.channels[record.id] = record
        elif isinstance(record, Message):
            self.messages.append((record.log_time, len(self.messages), record.channel_id,
                                  record.data))
        elif isinstance(record, Metadata) and record.name == METADATA_NAME:
            self.metadata.update({k: _json_or_text(v) for k, v in record.metadata.items()})


def _decoded(contents, topics):
    """``{topic: [(log time, message)]}`` of the messages on ``topics``, in log time order
    (file order among equal times).  ValueError naming the message that cannot be decoded
    (a CDR payload cut short, a schema that is not ros2msg)."""
    factory = DecoderFactory()
    decoders = {}
    out = {topic: [] for topic in topics}
    counts = {}
    for log_time, _, channel_id, data in sorted(contents.messages, key=lambda m: m[:2]):
        channel = contents.channels.get(channel_id)
        if channel is None or channel.topic not in out:
            continue
        k = counts[channel.topic] = counts.get(channel.topic, -1) + 1
        try:
            if channel_id not in decoders:
                decoders[channel_id] = factory.decoder_for(
                    channel.message_encoding, contents.schemas.get(channel.schema_id))
            if decoders[channel_id] is None:
                raise ValueError('not a CDR message with a ros2msg schema')
            message = decoders[channel_id](data)
        except Exception as err:    # noqa: BLE001 - whatever the CDR decoder meets
            raise ValueError('%s message %d (log time %.9f s) cannot be decoded: %s: %s'
                             % (channel.topic, k, log_time / 1e9, type(err).__name__,
                                shorten(str(err) or 'cut short', quote=False))) from None
        out[channel.topic].append((log_time, message))
    return out


def read_recording(path):
    """A :class:`~ros_vi.recording.Recording` from a ROS 2 MCAP with ``/joint_states`` (or
    one ``<namespace>/joint_states``): a ros_vi recording, or a bag from ``ros2 bag record``.

    t [s] from the joint_states header stamps (ns resolution; rows in stamp order);
    positions, velocities and efforts by joint name (nan where a message has none); energy
    from ``<ns>/energy`` at the same log time (nan if absent); robot_description from
    ``<ns>/robot_description`` ('' if absent); metadata from the ``ros_vi`` metadata
    record.  The file is read record by record
    up to its footer: one without a summary (a recording ended by a full disk) reads like any
    other.  ValueError naming the file when it has no footer (e.g. truncated by a killed
    process: ``mcap recover`` can salvage it), is damaged (a bad CRC, a record or message
    cut short: which one is named), is too large (:mod:`ros_vi.bounded`) or has no
    joint_states.
    """
    path = os.fspath(path)
    try:
        with open(path, 'rb') as fh:
            if fh.read(len(_MAGIC)) != _MAGIC:
                raise ValueError('not an MCAP file (it does not start with the MCAP magic)')
            fh.seek(0)
            contents = _Contents(fh, os.fstat(fh.fileno()).st_size)
        js_topic = _find_joint_states(contents.channels, contents.schemas)
        namespace = js_topic[:-len('/joint_states')]
        energy_topic = namespace + '/energy'
        desc_topic = namespace + '/robot_description'
        tf_topic = namespace + '/tf'
        parents = _free_bodies(contents.metadata)
        decoded = _decoded(contents, (js_topic, energy_topic, desc_topic) +
                           ((tf_topic,) if parents else ()))
        samples = []
        for _, msg in decoded[js_topic]:
            samples.append((join_ns(msg.header.stamp.sec, msg.header.stamp.nanosec), msg))
        samples.sort(key=lambda sample: sample[0])     # by stamp (bags may interleave)
        energy = {log_time: float(msg.data) for log_time, msg in decoded[energy_topic]}
        description = decoded[desc_topic][0][1].data if decoded[desc_topic] else None
        names, arrays = _joint_table(path, samples)
        stamps = [ns for ns, _ in samples]
        pose = _body_table(parents, decoded.get(tf_topic, []), stamps)
    except ValueError as err:
        raise ValueError('recording %r: %s' % (path, err)) from None
    except OSError as err:
        raise ValueError('recording %r: cannot read it: %s'
                         % (path, err.strerror or err)) from None
    return Recording(np.array(stamps, dtype=np.int64) / 1e9, names, arrays['position'],
                     arrays['velocity'], arrays['effort'],
                     np.array([energy.get(ns, np.nan) for ns in stamps], dtype=float),
                     description or '', contents.metadata, list(parents), pose)


def _free_bodies(metadata):
    """{body: parent frame} of a recording's ``free_bodies`` metadata ({} when absent);
    ValueError when it is not such a mapping."""
    value = metadata.get('free_bodies', {})
    if not (isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str)
                                            for k, v in value.items())):
        raise ValueError('metadata free_bodies is not a mapping of body to parent frame '
                         '(%s)' % shorten(value))
    return value


def _body_table(parents, tf_messages, stamps):
    """Poses (N, nb, 7) of the free bodies ``parents`` ({body: parent frame}) at the sample
    stamps [ns], from the ``/tf`` messages [(log time, TFMessage)]; ValueError naming a
    body without its transform at a sample's stamp."""
    found = {}
    for _, msg in tf_messages:
        for t in msg.transforms:
            if parents.get(t.child_frame_id) == t.header.frame_id:
                found[(join_ns(t.header.stamp.sec, t.header.stamp.nanosec),
                       t.child_frame_id)] = t.transform
    pose = np.empty((len(stamps), len(parents), 7))
    for k, ns in enumerate(stamps):
        for b, body in enumerate(parents):
            tr = found.get((ns, body))
            if tr is None:
                raise ValueError('no /tf pose of free body %r (from %r) at t = %.9g s'
                                 % (body, parents[body], ns / 1e9))
            r, p = tr.rotation, tr.translation
            pose[k, b] = (p.x, p.y, p.z, r.x, r.y, r.z, r.w)
    return pose


def _json_or_text(value):
    try:
        return json.loads(value)
    except ValueError:
        return value
