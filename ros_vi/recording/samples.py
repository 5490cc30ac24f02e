"""Recordings in memory and in npz / csv files: :class:`Recording` (joint states over
time), the streaming :class:`RecordingWriter`, atomic writes, and the check every recording
read goes through (:func:`check_recording`).  MCAP is :mod:`ros_vi.recording.mcap`;
:mod:`ros_vi.recording` chooses between the formats by the file's suffix."""
import collections
import io
import json
import os
import tempfile
from dataclasses import dataclass, field

import numpy as np

from ..bounded import load_npz
from ..conventions import matrix_to_pose
from ..errors import name_list, shorten

__all__ = ['Recording', 'RecordingWriter', 'FORMATS', 'POSE_FIELDS', 'state_sample',
           'check_recording', 'atomic_write', 'suffix', 'write_table', 'read_table']

FORMATS = ('.npz', '.csv', '.mcap')
_NPZ_FORMAT = 'ros_vi-recording-1'
#: the columns of a free body's pose: position [m] and unit quaternion in its joint's
#: parent frame (the odom frame of a floating base)
POSE_FIELDS = ('x', 'y', 'z', 'qx', 'qy', 'qz', 'qw')


@dataclass
class Recording:
    """N samples of joint states.

    t (N,) [s]; joint_names (nj,) in ``joint_states`` order (configs, then mimic joints);
    position, velocity (N, nj) [rad, m; rad/s, m/s]; effort (N, nj) [N m or N] applied over
    the tick that ended at ``t[k]`` (0 at the first sample); energy (N,) total energy T + V
    [J] (nan where unknown); robot_description: the URDF XML ('' when not known);
    metadata: ``{str: str | float | int}`` (model, dt, gravity, controller, status, ...);
    bodies (nb,): the free bodies (a floating base: its link), body_pose (N, nb, 7) their
    poses ``x, y, z`` [m], ``qx, qy, qz, qw`` in their free joint's parent frame
    (:data:`POSE_FIELDS`; none: shape (N, 0, 7)); a writer names that frame in
    ``metadata['free_bodies']`` ({body: parent frame}).
    """
    t: np.ndarray
    joint_names: list
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    energy: np.ndarray
    robot_description: str = ''
    metadata: dict = field(default_factory=dict)
    bodies: list = field(default_factory=list)
    body_pose: np.ndarray = None

    def __post_init__(self):
        if self.body_pose is None:
            self.body_pose = np.zeros((len(self.t), 0, len(POSE_FIELDS)))

    def __len__(self):
        return len(self.t)

    def column(self, joint):
        """Index of ``joint`` in :attr:`joint_names` (ValueError listing the names)."""
        try:
            return self.joint_names.index(joint)
        except ValueError:
            raise ValueError('no joint %r in the recording; it has %s'
                             % (joint, ', '.join(self.joint_names))) from None


def state_sample(state):
    """(t, names, position, velocity, effort, energy) of a :class:`ros_vi.simulation.SimState`
    in ``joint_states`` order (:meth:`~ros_vi.simulation.SimState.joint_states`: the joints,
    free joints' configs left out, then the mimic joints with effort 0)."""
    names, position, velocity, effort = state.joint_states()
    return float(state.t), names, position, velocity, effort, float(state.energy)


class RecordingWriter:
    """Appends samples; :meth:`close` writes (or finishes) the file (``path`` None: kept in
    memory only, see :meth:`recording`).  Use as a context
    manager or call :meth:`close` in a ``finally``.

    ``append(state, transforms=None, static_transforms=None)``: ``state`` a SimState
    (its free bodies' poses too: :attr:`Recording.body_pose`); ``transforms`` the moving
    joints' ``[(parent, child, (4, 4))]`` at that state
    (:meth:`ros_vi.simulation.Simulation.link_transforms`; used by MCAP's ``/tf``).
    """

    def __init__(self, path, robot_description='', metadata=None):
        self.path = None if path is None else os.fspath(path)
        self.robot_description = robot_description or ''
        self.metadata = dict(metadata or {})
        self.count = 0
        self._t, self._pos, self._vel, self._eff, self._energy = [], [], [], [], []
        self._names = None
        self._bodies, self._body_pose = None, []
        self.closed = False

    def append(self, state, transforms=None, static_transforms=None):
        t, names, pos, vel, eff, energy = state_sample(state)
        if self._names is None:
            self._names = names
        elif names != self._names:
            raise ValueError('joint names changed during the recording: %s, then %s'
                             % (self._names, names))
        bodies = [b.name for b in state.bodies]
        if self._bodies is None:
            self._bodies = bodies
            if bodies:
                self.metadata.setdefault('free_bodies',
                                         {b.name: b.parent for b in state.bodies})
        elif bodies != self._bodies:
            raise ValueError('free bodies changed during the recording: %s, then %s'
                             % (self._bodies, bodies))
        self._body_pose.append([np.concatenate(matrix_to_pose(b.pose)) for b in state.bodies])
        self._t.append(t)
        self._pos.append(pos)
        self._vel.append(vel)
        self._eff.append(eff)
        self._energy.append(energy)
        self.count += 1

    def recording(self):
        """The samples appended so far as a :class:`Recording`."""
        nj = len(self._names or [])
        stack = (lambda rows: np.array(rows, dtype=float).reshape(len(rows), nj))
        nb = len(self._bodies or [])
        return Recording(np.array(self._t, dtype=float), list(self._names or []),
                         stack(self._pos), stack(self._vel), stack(self._eff),
                         np.array(self._energy, dtype=float), self.robot_description,
                         dict(self.metadata), list(self._bodies or []),
                         np.array(self._body_pose, dtype=float).reshape(
                             len(self._t), nb, len(POSE_FIELDS)))

    def close(self):
        """Write the file (npz, csv: atomically).  ValueError naming it when it cannot be
        written (a full disk)."""
        if not self.closed:
            self.closed = True
            if self.path is not None:
                write_table(self.recording(), self.path)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def suffix(path, what):
    """The suffix of a recording file ``path`` (one of :data:`FORMATS`); ValueError
    naming ``what`` otherwise."""
    ext = os.path.splitext(os.fspath(path))[1].lower()
    if ext not in FORMATS:
        raise ValueError('%s %r: unknown file type %r (use %s)'
                         % (what, os.fspath(path), ext, ', '.join(FORMATS)))
    return ext


def atomic_write(path, write):
    """``write(tmp)`` to a temporary file name beside ``path`` (same suffix), then rename it
    into place with the usual permissions: readers never see a half-written file, and a
    failed write leaves nothing.  ValueError naming ``path`` when its folder cannot be
    written.  (A name, not a handle, so that writers such as ffmpeg can open it themselves.)
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix='.' + os.path.basename(path) + '.',
                                   suffix=os.path.splitext(path)[1], dir=folder)
    except OSError as err:
        raise ValueError('cannot write %r: %s' % (path, err.strerror or err)) from None
    os.close(fd)
    try:
        write(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)       # mkstemp's 0600 is not what a user expects
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_table(rec, path):
    """Write ``rec`` to an .npz or .csv ``path``, atomically.  ValueError naming the file
    when it cannot be written (a full disk: the file that was there is kept)."""
    ext = suffix(path, 'recording')
    if ext == '.npz':
        def write(tmp):
            np.savez(tmp, format=_NPZ_FORMAT, t=rec.t,
                     joint_names=np.array(rec.joint_names, dtype=str), position=rec.position,
                     velocity=rec.velocity, effort=rec.effort, energy=rec.energy,
                     robot_description=np.array(rec.robot_description),
                     metadata=np.array(json.dumps(rec.metadata)),
                     bodies=np.array(rec.bodies, dtype=str).reshape(-1),
                     body_pose=rec.body_pose)
    elif ext == '.csv':
        def write(tmp):
            with open(tmp, 'w', encoding='utf-8', newline='') as fh:
                fh.write(_csv_text(rec))
    else:
        raise ValueError('recording %r: write_table writes .npz and .csv files, not %s'
                         % (os.fspath(path), ext))
    try:
        atomic_write(path, write)
    except OSError as err:
        raise ValueError('recording %r: cannot write it: %s'
                         % (os.fspath(path), err.strerror or err)) from None


def read_table(path):
    """The :class:`Recording` of an .npz or .csv ``path`` as read (not yet checked: see
    :func:`ros_vi.recording.load_recording`)."""
    return _load_npz(path) if suffix(path, 'recording') == '.npz' else _load_csv(path)


def _csv_text(rec):
    out = io.StringIO()
    for key, value in rec.metadata.items():
        out.write('# %s: %s\n' % (key, json.dumps(value)))
    header = ['t'] + ['%s.%s' % (n, kind) for kind in ('position', 'velocity', 'effort')
                      for n in rec.joint_names] + [
        '%s.%s' % (b, f) for b in rec.bodies for f in POSE_FIELDS] + ['energy']
    out.write(','.join(header) + '\n')
    table = np.column_stack([rec.t, rec.position, rec.velocity, rec.effort,
                             rec.body_pose.reshape(len(rec.t), -1), rec.energy]) \
        if len(rec.t) else np.zeros((0, len(header)))
    for row in table:
        out.write(','.join(repr(float(x)) for x in row) + '\n')
    return out.getvalue()


def check_recording(rec):
    """What is wrong with a :class:`Recording` read from a file ('' when nothing): ``t``
    (N,) finite and never decreasing; ``joint_names`` distinct strings; ``position``,
    ``velocity``, ``effort`` (N, nj) and ``energy`` (N,) numbers, nan allowed (a value a
    bag does not carry), never infinite; ``bodies`` distinct strings and ``body_pose`` (N,
    nb, 7) finite numbers; ``robot_description`` a string; ``metadata`` a mapping with
    string keys."""
    t = rec.t
    if not (isinstance(t, np.ndarray) and t.ndim == 1 and t.dtype.kind in 'fiu'):
        return 't is not a list of times (%s)' % _describe(t)
    n = len(t)
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        return 'sample %d has time %r' % (bad[0], float(t[bad[0]]))
    back = np.flatnonzero(np.diff(t) < 0)
    if back.size:
        return 'time goes back at sample %d (%r s after %r s)' % (
            back[0] + 1, float(t[back[0] + 1]), float(t[back[0]]))
    names = rec.joint_names
    problem = _names_problem(names, 'joint_names', 'joint')
    if problem:
        return problem
    for key, shape in (('position', (n, len(names))), ('velocity', (n, len(names))),
                       ('effort', (n, len(names))), ('energy', (n,))):
        value = getattr(rec, key)
        if not (isinstance(value, np.ndarray) and value.shape == shape and
                value.dtype.kind in 'fiu'):
            return '%s is %s, expected numbers of shape %s (%d samples, %d joints)' % (
                key, _describe(value), shape, n, len(names))
        inf = np.argwhere(np.isinf(value))
        if inf.size:
            k = tuple(int(i) for i in inf[0])
            return '%s of %s is %r at t = %g s' % (
                key, 'the recording' if len(k) == 1 else 'joint %r' % names[k[1]],
                float(value[k]), t[k[0]])
    bodies = rec.bodies
    problem = _names_problem(bodies, 'bodies', 'body')
    if problem:
        return problem
    pose = rec.body_pose
    shape = (n, len(bodies), len(POSE_FIELDS))
    if not (isinstance(pose, np.ndarray) and pose.shape == shape and pose.dtype.kind in 'fiu'):
        return 'body_pose is %s, expected numbers of shape %s (%d samples, %d bodies)' % (
            _describe(pose), shape, n, len(bodies))
    bad = np.argwhere(~np.isfinite(pose))
    if bad.size:
        k, b, f = (int(i) for i in bad[0])
        return 'body_pose of body %r is %r (%s) at t = %g s' % (
            bodies[b], float(pose[k, b, f]), POSE_FIELDS[f], t[k])
    if not isinstance(rec.robot_description, str):
        return 'robot_description is not text (%s)' % _describe(rec.robot_description)
    if not (isinstance(rec.metadata, dict) and all(isinstance(k, str) for k in rec.metadata)):
        return 'metadata is not a mapping of names to values (%s)' % shorten(rec.metadata)
    return ''


def _names_problem(names, field, what):
    """What is wrong with the list of names ``names`` (the recording's ``field``, each a
    ``what``), '' when nothing."""
    if not (isinstance(names, list) and all(isinstance(x, str) for x in names)):
        return '%s are not names (%s)' % (field, _describe(names))
    twice = [x for x, count in collections.Counter(names).items() if count > 1]
    if twice:
        return '%s %s is named twice' % (what, name_list(twice))
    return ''


def _describe(value):
    if isinstance(value, np.ndarray):
        return '%s of shape %s' % (value.dtype, value.shape)
    return shorten(value)


def _text(z, key):
    """A text entry of a recording's npz (a 0-d string array)."""
    value = z[key]
    if value.shape != () or value.dtype.kind != 'U':
        raise ValueError('%r is not text (%s of shape %s)' % (key, value.dtype, value.shape))
    return str(value)


def _load_npz(path):
    z = load_npz(path, '')
    if 'format' not in z or z['format'].shape != () or str(z['format']) != _NPZ_FORMAT:
        raise ValueError('not a ros_vi recording (no format %r)' % _NPZ_FORMAT)
    names = z['joint_names']
    if names.ndim != 1 or names.dtype.kind != 'U':
        raise ValueError("'joint_names' is not a list of names (%s of shape %s)"
                         % (names.dtype, names.shape))
    metadata = json.loads(_text(z, 'metadata'))
    # recordings written before free bodies have none
    bodies = z['bodies'] if 'bodies' in z else np.zeros(0, dtype=str)
    if bodies.ndim != 1 or (bodies.size and bodies.dtype.kind != 'U'):
        raise ValueError("'bodies' is not a list of names (%s of shape %s)"
                         % (bodies.dtype, bodies.shape))
    pose = z['body_pose'] if 'body_pose' in z else None
    return Recording(z['t'], [str(n) for n in names], z['position'], z['velocity'],
                     z['effort'], z['energy'], _text(z, 'robot_description'), metadata,
                     [str(b) for b in bodies], pose)


def _load_csv(path):
    metadata, header, rows = {}, None, []
    with open(path, encoding='utf-8') as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            if line.startswith('#'):
                key, _, value = line[1:].partition(':')
                metadata[key.strip()] = json.loads(value)
            elif header is None:
                header = line.split(',')
            else:
                rows.append([float(x) for x in line.split(',')])
    layout = 'expected a header t, <joint>.position..., <body>.x...<body>.qw..., energy'
    if header is None or header[0] != 't' or header[-1] != 'energy':
        raise ValueError(layout)
    nj = sum(1 for h in header if h.endswith('.position'))
    pose_columns = header[1 + 3 * nj:-1]
    if len(pose_columns) % len(POSE_FIELDS):
        raise ValueError(layout)
    nb = len(pose_columns) // len(POSE_FIELDS)
    bodies = [h[:-len('.x')] for h in pose_columns[::len(POSE_FIELDS)]]
    if pose_columns != ['%s.%s' % (b, f) for b in bodies for f in POSE_FIELDS]:
        raise ValueError(layout)
    names = [h[:-len('.position')] for h in header[1:1 + nj]]
    table = np.array(rows, dtype=float).reshape(len(rows), len(header))
    return Recording(table[:, 0], names, table[:, 1:1 + nj], table[:, 1 + nj:1 + 2 * nj],
                     table[:, 1 + 2 * nj:1 + 3 * nj], table[:, -1], '', metadata, bodies,
                     table[:, 1 + 3 * nj:-1].reshape(len(rows), nb, len(POSE_FIELDS)))
