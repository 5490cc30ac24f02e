"""A recording played back as a picture: GIF (Pillow) or MP4 (imageio-ffmpeg), or one still
frame (PNG).

The robot is rebuilt from the recording's URDF (or one given), each frame's joint positions
are interpolated linearly from the recorded samples at the frame's time, the link poses are
the robot's forward kinematics at those positions (mimic joints follow their leaders) moved
with the recorded pose of its floating base if it has one (interpolated: position linearly,
attitude along the shortest rotation), and :mod:`.render` draws them from a camera fitted
once to the whole motion.
"""
import math
import os
import warnings
from dataclasses import dataclass

import numpy as np
from PIL import Image

from ..recording import atomic_write
from ..urdf import import_urdf, link_geometry
from .render import RobotScene, draw, fit_view

__all__ = ['animate', 'render_frame', 'write_animation', 'Animation', 'load_robot',
           'joint_columns', 'config_positions', 'base_poses', 'free_body_poses', 'frame_times',
           'link_pose_track',
           'check_size', 'OUTPUT_TYPES', 'MAX_FRAMES']

OUTPUT_TYPES = ('.gif', '.mp4')
#: frames of one animation (20 minutes at 25 fps)
MAX_FRAMES = 30_000


@dataclass
class Animation:
    """What :func:`animate` wrote: ``path``, ``frames`` (count), ``duration`` [s] of
    playback, ``fps``, ``view`` (the :class:`~.render.View` used), ``start``/``end`` [s]:
    the recording time shown."""
    path: str
    frames: int
    duration: float
    fps: float
    view: object
    start: float
    end: float


def load_robot(urdf_text, base_dir=None, packages_only=False, joint_names=None):
    """``(system, scene)`` of a URDF: the imported System (for the kinematics; importer
    quirks are not repeated here, ``ros-vi info`` reports them) and its :class:`RobotScene`
    of visual shapes (missing meshes warn, see :func:`ros_vi.urdf.link_geometry`;
    ``packages_only``: only ``package://`` meshes of installed packages, for a description
    from a ROS graph).  A ``floating`` joint is a free joint, as a simulation of it has it:
    a drawing places it by its body's pose (:func:`free_body_poses`, ``link_pose_track``'s
    ``bodies``); when the recording's ``joint_names`` carry its six Euler-angle configs
    instead (``joint_yaw``: a recording made with ``floating_base='euler'``), the model
    has those."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        system = import_urdf(urdf_text)
        if joint_names is not None and system.free_joints:
            names = set(joint_names)
            if any(c.name[:-3] + '_yaw' in names for j in system.free_joints
                   for c in j.configs[3:4]):
                system = import_urdf(urdf_text, floating_base='euler')
    shapes = link_geometry(urdf_text, 'visual', base_dir=base_dir,
                           packages_only=packages_only)
    return system, RobotScene(system.urdf, shapes)


def _free_configs(system):
    """Names of the configs of the system's free joints (placed by their bodies' poses)."""
    return {c.name for j in system.free_joints for c in j.configs}


def joint_columns(system, joint_names):
    """Column of each of the system's configs in a recording's ``joint_names`` (-1 for a
    free joint's config: a recording carries its body's pose instead); ValueError naming
    the configs the recording lacks and the joints the model does not have (mimic joints in
    the recording are accepted: they follow their leaders)."""
    free = _free_configs(system)
    configs = [c.name for c in system.configs if c.name not in free]
    mimic = set(system.urdf.mimic_joint_names) if getattr(system, 'urdf', None) else set()
    names = list(joint_names)
    missing = [c for c in configs if c not in names]
    unknown = [n for n in names if n not in configs and n not in mimic]
    if missing or unknown:
        parts = []
        if missing:
            parts.append('the model\'s joints %s are not in the recording'
                         % ', '.join(map(repr, missing)))
        if unknown:
            parts.append('the recording\'s joints %s are not in the model'
                         % ', '.join(map(repr, unknown)))
        raise ValueError('recording and model do not match: %s (model joints: %s)'
                         % ('; '.join(parts), ', '.join(configs) or 'none'))
    return [-1 if c.name in free else names.index(c.name) for c in system.configs]


def frame_times(t, fps=25.0, speed=1.0, start=None, end=None):
    """Recording times [s] of the frames: ``start + k * speed / fps`` for
    k = 0 .. floor((end - start) * fps / speed) - 1 (one frame at least); ``start``/``end``
    default to the recording's first and last time.  ValueError naming the bad value, or
    when that is more than :data:`MAX_FRAMES` frames."""
    t = np.asarray(t, float)
    if not len(t):
        raise ValueError('the recording has no samples')
    if not (math.isfinite(fps) and fps > 0):
        raise ValueError('fps must be > 0, got %r' % (fps,))
    if not (math.isfinite(speed) and speed > 0):
        raise ValueError('speed must be > 0, got %r' % (speed,))
    first, last = float(t[0]), float(t[-1])
    t0 = first if start is None else float(start)
    t1 = last if end is None else float(end)
    for name, value in (('start', t0), ('end', t1)):
        if not (first - 1e-9 <= value <= last + 1e-9):
            raise ValueError('%s %g s is outside the recording (%g to %g s)'
                             % (name, value, first, last))
    if t1 < t0:
        raise ValueError('end %g s is before start %g s' % (t1, t0))
    count = (t1 - t0) * fps / speed
    if not count <= MAX_FRAMES:
        raise ValueError('%g s at %g fps and speed %g is %s frames, more than the %s an '
                         'animation may have (MAX_FRAMES)' % (
                             t1 - t0, fps, speed, format(count, '.3g'),
                             format(MAX_FRAMES, ',')))
    n = max(1, int(math.floor(count + 1e-9)))
    return t0 + np.arange(n) * (speed / fps)


def config_positions(system, recording, times):
    """Config positions (len(times), nQ) [rad or m] of ``system`` at recording times [s]:
    each config's recorded column (:func:`joint_columns`), interpolated linearly in time
    (held at the ends)."""
    columns = np.array(joint_columns(system, recording.joint_names), dtype=int)
    t = np.asarray(recording.t, float)
    pos = np.asarray(recording.position, float).reshape(len(t), -1)[:, np.maximum(columns, 0)]
    pos[:, columns < 0] = 0.0        # free joints: placed by their bodies' poses
    missing = np.argwhere(~np.isfinite(pos))
    if missing.size:        # a bag's joint that a message does not carry: nan
        k, j = missing[0]
        raise ValueError('the recording has no position of joint %r at t = %g s (sample %d)'
                         % (system.configs[j].name, t[k], k))
    times = np.asarray(times, float)
    if len(t) == 1:
        return np.repeat(pos, len(times), axis=0)
    out = np.empty((len(times), len(columns)))
    for j in range(len(columns)):
        out[:, j] = np.interp(times, t, pos[:, j])
    return out


def base_poses(system, recording, times):
    """Poses (len(times), 4, 4) of the robot's floating base at recording times [s] (the
    recorded free body that is its root link, with any prefix; held at the ends), or None
    when the recording has no such body (a fixed robot).  Between samples the position is
    interpolated linearly and the attitude along the shortest rotation (normalised linear
    interpolation of the quaternions, one hemisphere)."""
    root = system.urdf.root_link
    match = [b for b, name in enumerate(recording.bodies) if name.endswith(root)]
    if not match:
        return None
    return _body_track(recording, match[0], times)


def free_body_poses(system, recording, times):
    """Poses (len(times), nfree, 4, 4) of the system's free joints' bodies (each in its
    joint's parent frame, ``system.free_joints`` order) at recording times [s], from the
    recording's free bodies (interpolated as :func:`base_poses`); None without free joints.
    ValueError naming a free body the recording does not carry."""
    if not system.free_joints:
        return None
    names = list(recording.bodies)
    lacking = [j.name for j in system.free_joints if j.name not in names]
    if lacking:
        raise ValueError('recording and model do not match: the recording has no pose of '
                         'the free bodies %s (it has %s)'
                         % (', '.join(map(repr, lacking)), ', '.join(names) or 'none'))
    out = np.empty((len(times), len(system.free_joints), 4, 4))
    for k, joint in enumerate(system.free_joints):
        out[:, k] = _body_track(recording, names.index(joint.name), times)
    return out


def _body_track(recording, b, times):
    """Poses (len(times), 4, 4) of recorded body ``b`` at ``times``: the position
    interpolated linearly, the attitude along the shortest rotation (normalised linear
    interpolation of the quaternions, one hemisphere); held at the ends."""
    from ..conventions import pose_to_matrix
    pose = np.asarray(recording.body_pose, float)[:, b]
    t = np.asarray(recording.t, float)
    quats = pose[:, 3:].copy()
    for k in range(1, len(quats)):          # neighbours on one hemisphere
        if quats[k] @ quats[k - 1] < 0:
            quats[k] = -quats[k]
    out = np.empty((len(times), 4, 4))
    for i, time in enumerate(np.asarray(times, float)):
        xyz = [np.interp(time, t, pose[:, j]) for j in range(3)]
        q = [np.interp(time, t, quats[:, j]) for j in range(4)]
        out[i] = pose_to_matrix(xyz, q)
    return out


def _placed(track, base):
    """Link poses (nframes, nlinks, 4, 4) moved with the base poses (nframes, 4, 4)."""
    return track if base is None else np.einsum('fij,fljk->flik', base, track)


def link_pose_track(system, scene, positions, bodies=None):
    """(nframes, nlinks, 4, 4) world link poses in ``scene.links`` order at each row of
    config ``positions`` (nframes, nq): the robot's own forward kinematics
    (``system.urdf.link_poses``), evaluated on a Data of its own (``system``'s state is not
    moved).  ``bodies`` (nframes, nfree, 4, 4): the poses of its free joints' bodies
    (:func:`free_body_poses`; their configs in ``positions`` are then ignored), or
    ``attitudes`` of their charts: a (nfree, 3, 3) array holds every frame's reference
    attitudes (a live simulation's, with its chart angles in ``positions``)."""
    data = system.model.create_data()
    robot = system.urdf
    charts = system.free_charts
    out = np.empty((len(positions), len(scene.links), 4, 4))
    bodies = None if bodies is None else np.asarray(bodies, float)
    if charts is not None and bodies is not None and bodies.ndim == 3:
        charts.set_attitudes(bodies)            # the same charts for every frame
        bodies = None
    with system.evaluate_at(data):
        for k, q in enumerate(positions):
            q = np.array(q, float)
            if charts is not None and bodies is not None:
                # each body at its pose: the chart centred on its attitude, angles 0
                charts.set_attitudes(bodies[k, :, :3, :3])
                for j, rows in enumerate(zip(charts.translation, charts.rotation)):
                    q[rows[0]] = bodies[k, j, :3, 3]
                    q[rows[1]] = 0.0
            data.set(q=q)
            poses = robot.link_poses()
            out[k] = [poses[l] for l in scene.links]
    return out


def _decimals(step):
    return max(2, int(math.ceil(-math.log10(step))) if step < 1 else 0)


def _write_gif(path, frames, fps, count):
    # GIF delays are whole centiseconds: spread the rounding so the average rate is fps
    ticks = np.round(np.arange(count + 1) * 100.0 / fps)
    durations = (np.diff(ticks) * 10).astype(int).tolist()
    palette = []

    def quantized():
        # one palette for the whole film (from the first frame): no colour flicker
        for img in frames:
            if not palette:
                palette.append(img.quantize(colors=255, method=Image.Quantize.MEDIANCUT))
            yield img.quantize(palette=palette[0], dither=Image.Dither.NONE)

    stream = quantized()
    first = next(stream)
    first.save(path, format='GIF', save_all=True, append_images=stream, duration=durations,
               loop=0, optimize=False)


def _write_mp4(path, frames, fps, size):
    import imageio_ffmpeg
    writer = imageio_ffmpeg.write_frames(path, size, fps=fps, codec='libx264',
                                         pix_fmt_in='rgb24', pix_fmt_out='yuv420p',
                                         quality=7, macro_block_size=2,
                                         ffmpeg_log_level='error')
    writer.send(None)
    try:
        for img in frames:
            writer.send(img.tobytes())
    finally:
        writer.close()


def check_size(size, suffix=None):
    """``(width, height)`` [px] of ``size``; ValueError naming it when it is not 16 to 8192
    pixels each (even for an MP4, ``suffix`` '.mp4')."""
    try:
        w, h = (int(x) for x in size)
    except (TypeError, ValueError):
        raise ValueError('size must be (width, height) in pixels, got %r' % (size,)) from None
    if not (16 <= w <= 8192 and 16 <= h <= 8192):
        raise ValueError('size %dx%d: width and height must be 16 to 8192 pixels' % (w, h))
    if suffix == '.mp4' and (w % 2 or h % 2):
        raise ValueError('size %dx%d: an MP4 (yuv420p) needs an even width and height'
                         % (w, h))
    return w, h


def animate(recording, path, urdf=None, base_dir=None, fps=25.0, speed=1.0,
            size=(640, 480), azimuth=None, elevation=20.0, distance=None, target=None,
            frames=False, start=None, end=None, supersample=2):
    """Write ``recording`` (a :class:`ros_vi.recording.Recording`) as an animation.

    path : str
        ``.gif`` (Pillow) or ``.mp4`` (H.264 through imageio-ffmpeg).
    urdf : str, optional
        URDF text of the robot (default: the recording's ``robot_description``; needed for a
        CSV recording).  ``base_dir``: folder for its relative mesh paths.
    fps : float
        Frames per second of the animation; ``speed``: recording seconds per second of
        playback (2: twice as fast).  Frame k shows the recording at
        ``start + k * speed / fps`` (positions interpolated linearly), so there are
        ``floor((end - start) * fps / speed)`` frames (at least one).
    size : (width, height) [px]
    azimuth, elevation, distance, target : camera (:func:`~.render.fit_view`; azimuth None
        faces the motion's plane; distance and target None frame the whole motion).
    frames : bool
        Draw every link's axes.
    start, end : float, optional
        Recording times [s] to show (default: all of it).
    supersample : int
        Frames are drawn this many times larger and reduced (smooth edges; 1: faster).

    Returns an :class:`Animation`.  ValueError naming the culprit for a bad suffix, size,
    time range or a recording whose joints are not the model's.
    """
    path = os.fspath(path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in OUTPUT_TYPES:
        raise ValueError('output %r: unknown file type %r (use %s)'
                         % (path, suffix, ' or '.join(OUTPUT_TYPES)))
    size = check_size(size, suffix)
    text = urdf if urdf is not None else recording.robot_description
    if not text:
        raise ValueError('the recording has no robot description (a CSV recording keeps '
                         'none): give the URDF')
    times = frame_times(recording.t, fps, speed, start, end)
    system, scene = load_robot(text, base_dir, joint_names=recording.joint_names)
    positions = config_positions(system, recording, times)
    track = _placed(link_pose_track(system, scene, positions,
                                    free_body_poses(system, recording, times)),
                    base_poses(system, recording, times))
    view = fit_view(scene, track, size, azimuth, elevation, distance, target, frames=frames)
    return write_animation(path, scene, times, track, view, fps, speed, supersample)


def write_animation(path, scene, times, track, view, fps, speed=1.0, supersample=2):
    """Draw ``scene`` at each pose array of ``track`` (nframes, nlinks, 4, 4) seen from
    ``view``, labelled with its time ``times`` (nframes,) [s], into ``path`` (``.gif`` or
    ``.mp4``, by its suffix; written atomically) at ``fps`` frames per second (``speed``:
    recording seconds per second, for the label's decimals).  Returns an
    :class:`Animation`."""
    dec = _decimals(speed / fps)
    size = view.size

    def pictures():
        for t, poses in zip(times, track):
            yield draw(scene, poses, view, label='t = %.*f s' % (dec, t),
                       supersample=supersample)

    if os.path.splitext(path)[1].lower() == '.gif':
        atomic_write(path, lambda tmp: _write_gif(tmp, pictures(), fps, len(times)))
    else:
        atomic_write(path, lambda tmp: _write_mp4(tmp, pictures(), fps, size))
    return Animation(path, len(times), len(times) / fps, float(fps), view,
                     float(times[0]), float(times[-1]))


def render_frame(source, path=None, t=None, positions=None, urdf=None, base_dir=None,
                 size=(640, 480),
                 azimuth=None, elevation=20.0, distance=None, target=None, frames=False,
                 supersample=2):
    """One still picture of a robot: a ``PIL.Image``, also saved to ``path`` when given
    (type from the suffix: ``.png``, ...).

    source : Recording or str
        A recording (shown at time ``t`` [s], default its first sample; positions
        interpolated; its robot from ``urdf`` when given, from its ``robot_description``
        otherwise) or URDF text (shown at ``positions``: ``{joint: value}`` [rad or m],
        others 0).
    The camera is fitted to the recording's whole motion, as :func:`animate` fits it (a
    still is a frame of the animation), or to the one pose of a URDF (see :func:`animate`
    for the other arguments).
    """
    size = check_size(size)
    if isinstance(source, (str, bytes)):
        system, scene = load_robot(source, base_dir)
        q = np.zeros(system.nQ)
        names = [c.name for c in system.configs]
        for joint, value in (positions or {}).items():
            if joint not in names:
                raise ValueError('no joint %r in the model; it has %s'
                                 % (joint, ', '.join(names) or 'none'))
            q[names.index(joint)] = float(value)
        label = None
    else:
        text = urdf if urdf is not None else source.robot_description
        if not text:
            raise ValueError('the recording has no robot description: give the URDF')
        system, scene = load_robot(text, base_dir, joint_names=source.joint_names)
        time = float(source.t[0]) if t is None else float(t)
        if not source.t[0] - 1e-9 <= time <= source.t[-1] + 1e-9:
            raise ValueError('t %g s is outside the recording (%g to %g s)'
                             % (time, source.t[0], source.t[-1]))
        q = config_positions(system, source, [time])[0]
        label = 't = %.2f s' % time
    track = link_pose_track(system, scene, [q], None if label is None
                            else free_body_poses(system, source, [time]))
    motion = track
    if label is not None:
        track = _placed(track, base_poses(system, source, [time]))
        # a still of a recording is framed like the animation of it: on the whole motion
        span = np.linspace(source.t[0], source.t[-1], min(len(source.t), 200))
        motion = _placed(link_pose_track(system, scene, config_positions(system, source, span),
                                         free_body_poses(system, source, span)),
                         base_poses(system, source, span))
    view = fit_view(scene, motion, size, azimuth, elevation, distance, target, frames=frames)
    img = draw(scene, track[0], view, label=label, supersample=supersample)
    if path is not None:
        img.save(os.fspath(path))
    return img
