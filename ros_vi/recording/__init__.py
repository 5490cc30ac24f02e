"""Recordings of a simulation as a ROS user sees it: joint states over time.

A :class:`Recording` holds what the simulator publishes on ``joint_states`` at every sample
(positions, velocities and efforts of every moving joint, mimic joints included), the total
energy, the URDF (``robot_description``) and a few facts about the run (``metadata``).  It is
what ``ros-vi simulate --out`` writes and what ``ros-vi plot`` / ``ros-vi animate`` read.

The file type follows the name:

* ``*.npz`` -- a NumPy archive (``numpy.load(path, allow_pickle=False)``);
* ``*.csv`` -- one row per sample: ``t``, ``<joint>.position``, ``<joint>.velocity``,
  ``<joint>.effort`` for each joint, ``energy``; the metadata as ``# key: value`` lines at the
  top (no URDF: give the model again when animating a CSV);
* ``*.mcap`` -- a ROS 2 bag (CDR): ``/joint_states``, ``/tf``, ``/tf_static``, ``/clock``,
  ``/robot_description``, ``/energy`` (:mod:`ros_vi.recording.mcap`, docs/recording.md).

Writers are streaming (:func:`open_writer`): samples are appended as the simulation runs and
:meth:`RecordingWriter.close` leaves a complete, readable file whatever happened before
(a run that fails keeps what it recorded).  npz and csv files are written atomically (a
temporary file renamed into place: a write that fails, on a full disk, leaves the file that
was there, or none); an MCAP whose disk fills up ends after its last whole chunk.

:func:`load_recording` reads what it is given with bounds (:mod:`ros_vi.bounded`) and checks
what it read (:func:`check_recording`): a damaged, cut or odd file is one ValueError naming
the file and the fault, never a traceback.
"""
import os

from ..errors import shorten
from .samples import (FORMATS, Recording, RecordingWriter, atomic_write, check_recording,
                      read_table, state_sample, suffix, write_table)

__all__ = ['Recording', 'RecordingWriter', 'open_writer', 'load_recording', 'save_recording',
           'FORMATS', 'state_sample', 'check_recording', 'atomic_write']


def open_writer(path, robot_description='', metadata=None):
    """A :class:`RecordingWriter` for ``path`` (type from the suffix: .npz, .csv, .mcap)."""
    if suffix(path, 'recording') == '.mcap':
        from .mcap import McapWriter
        return McapWriter(path, robot_description, metadata)
    return RecordingWriter(path, robot_description, metadata)


def save_recording(rec, path):
    """Write ``rec`` to ``path`` (.npz, .csv or .mcap, from the suffix), atomically.
    ValueError naming the file when it cannot be written (a full disk: the file that was
    there is kept)."""
    if suffix(path, 'recording') != '.mcap':
        write_table(rec, path)
        return
    from .mcap import write_recording
    try:
        write_recording(rec, path)
    except OSError as err:
        raise ValueError('recording %r: cannot write it: %s'
                         % (os.fspath(path), err.strerror or err)) from None


def load_recording(path):
    """Read a recording written by :func:`save_recording` / :func:`open_writer` (or any ROS 2
    MCAP with ``/joint_states``), bounded (:mod:`ros_vi.bounded`) and checked
    (:func:`check_recording`).  Raises ValueError naming the file when it cannot."""
    path = os.fspath(path)
    ext = suffix(path, 'recording')
    if not os.path.isfile(path):
        raise ValueError('recording %r: no such file' % path)
    if ext == '.mcap':
        from .mcap import read_recording
        rec = read_recording(path)
    else:
        try:
            rec = read_table(path)
        except (OSError, KeyError, ValueError, RecursionError, UnicodeDecodeError) as err:
            reason = err.strerror if isinstance(err, OSError) and err.strerror else \
                (str(err) if not isinstance(err, RecursionError) else 'nested too deeply')
            raise ValueError('recording %r: cannot read it as %s: %s'
                             % (path, ext, shorten(reason, limit=600, quote=False))) from None
    problem = check_recording(rec)
    if problem:
        raise ValueError('recording %r: %s' % (path, problem))
    return rec
