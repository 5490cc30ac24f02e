"""trep's visual API (ros_vi.visual.items, ros_vi.visual.puppet_visual): items of a System
and its trajectory, drawn at the right poses, played into a GIF, served without blocking,
and trep's marionette script running past its visual call.  (The page of a puppet in
headless Chromium: test_viewer_browser.py.)"""
import os
import threading
import warnings

import numpy as np
import pytest
from PIL import Image

import ros_vi as trep
from ros_vi import rx, tz
from ros_vi.puppets import Puppet, PuppetVisual
from ros_vi.visual import items as visual_items
from ros_vi.visual.items import PlayerScene, VisualItem2D, VisualItem3D, stlmodel


def double_pendulum():
    s = trep.System()
    s.import_frames([rx('theta1'), [tz(-1.0, mass=1.0, name='m1'), [
        rx('theta2'), [tz(-0.5, mass=0.5, name='m2')]]]])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    return s


def swinging_puppet(steps=30, dt=0.02):
    """A puppet released tilted, strings held: (puppet, times (n,), configurations)."""
    p = Puppet(string_constraints=True)
    p.q = {'torso_rx': 0.2, 'torso_ry': 0.1}
    p.project_string_controls()
    q0, qk = p.q, p.qk
    mvi = trep.MidpointVI(p)
    mvi.initialize_from_configs(0.0, q0, dt, q0)
    T, Q = [mvi.t1], [mvi.q1]
    for _ in range(steps):
        mvi.step(mvi.t2 + dt, (), qk)
        T.append(mvi.t2)
        Q.append(mvi.q2)
    return p, np.array(T), np.array(Q)


def test_trep_names():
    import ros_vi.visual
    assert trep.visual is ros_vi.visual
    for name in ('visualize_3d', 'visualize_2d', 'VisualItem3D', 'VisualItem2D', 'stlmodel'):
        assert hasattr(trep.visual, name)
    assert issubclass(PuppetVisual, VisualItem3D)


def test_default_drawing_follows_the_trajectory():
    s = double_pendulum()
    t = np.array([0.0, 1.0, 2.0])
    q = np.array([[0.0, 0.0], [0.5, -0.3], [1.0, 0.4]])
    s.q = [0.2, 0.1]
    scene = PlayerScene([VisualItem3D(s, t, q)])
    # trep's drawing: a ball per mass, a line per frame with a parent
    assert len(scene.body_names) == 2
    with_parent = [f for f in s.frames if f.parent is not None]
    assert len(scene.segment_names) == len(with_parent)
    for time, expected in ((0.5, [0.25, -0.15]), (1.5, [0.75, 0.05]), (9.0, [1.0, 0.4]),
                           (-1.0, [0.0, 0.0])):
        bodies, ends = scene.frame_poses(time)
        probe = double_pendulum()
        probe.q = expected
        for g, name in zip(bodies, ('m1', 'm2')):
            assert np.abs(g - probe.get_frame(name).g()).max() < 1e-12
        for (a, b), f in zip(ends, [f for f in probe.frames if f.parent is not None]):
            assert np.abs(a - f.parent.p()[:3]).max() < 1e-12
            assert np.abs(b - f.p()[:3]).max() < 1e-12
    np.testing.assert_array_equal(s.q, [0.2, 0.1])     # the system is not moved
    # the ball radius: a sphere of the mass at the density
    radius = scene.scene.vertices[scene.scene.vertex_link == 0]
    assert np.linalg.norm(radius, axis=1).max() == pytest.approx(
        (3 / 4 * 1.0 / (50 * np.pi)) ** (1 / 3), rel=1e-9)


def test_offset_orientation_and_stretched_segments():
    s = double_pendulum()
    item = VisualItem3D(s, [0.0, 1.0], [[0.3, 0.2], [0.3, 0.2]], offset=[0, 1, 0])
    item.setOrientation(forward=[0, -1, 0], up=[0, 0, 1])
    scene = PlayerScene([item])
    s.q = [0.3, 0.2]
    R = item.orientation()[:3, :3]
    assert np.abs(R @ [0, -1, 0] - [1, 0, 0]).max() < 1e-15    # forward -> world x
    bodies, ends = scene.frame_poses(0.5)
    for g, name in zip(bodies, ('m1', 'm2')):
        p = R @ s.get_frame(name).p()[:3] + [0, 1, 0]
        assert np.abs(g[:3, 3] - p).max() < 1e-12
    # the renderer's unit cylinder of a segment spans its two ends
    poses = scene.poses(0.5)
    for k, (a, b) in enumerate(ends):
        g = poses[len(bodies) + k]
        assert np.abs(g[:3, :3] @ [0, 0, 1] + g[:3, 3] - b).max() < 1e-12
        assert np.abs(g[:3, 3] - a).max() < 1e-12


def test_puppet_visual_bodies_and_strings_move():
    p, T, Q = swinging_puppet()
    scene = PlayerScene([PuppetVisual(p, T, Q)])
    frames = {n.split('/')[1].rsplit('_', 1)[0] for n in scene.body_names}
    assert {'pelvis', 'head_center', 'lfemur', 'rtibia', 'lhumerus', 'rradius'} <= frames
    assert len(scene.segment_names) == 6           # one line per string
    b0, e0 = scene.frame_poses(T[0])
    b1, e1 = scene.frame_poses(T[-1])
    assert np.abs(b1[:, :3, 3] - b0[:, :3, 3]).max() > 0.01       # the bodies move
    # each string runs from its hook to its control point, where the puppet is then
    probe = Puppet(string_constraints=True)
    probe.q = Q[-1]
    R = PuppetVisual(probe).orientation()[:3, :3]
    for (a, b), name in zip(e1, probe.string_constraints):
        info = probe.string_constraints[name]
        hook, control = probe.get_frame(info['hook']), probe.get_frame(info['control_hook'])
        assert np.abs(a - R @ hook.p()[:3]).max() < 1e-12
        assert np.abs(b - R @ control.p()[:3]).max() < 1e-12


def test_gif_of_a_trajectory(tmp_path):
    p, T, Q = swinging_puppet(steps=10, dt=0.05)
    path = str(tmp_path / 'puppet.gif')
    film = trep.visual.visualize_3d([PuppetVisual(p, T, Q)], output=path, fps=10,
                                    size=(160, 120))
    assert film.frames == 5 and film.start == 0.0
    img = Image.open(path)
    assert img.n_frames == 5 and img.size == (160, 120)
    first = np.asarray(img.convert('RGB'), dtype=int)
    img.seek(4)
    last = np.asarray(img.convert('RGB'), dtype=int)
    assert np.any(np.abs(first - last) > 30, axis=2).sum() > 20    # the puppet moved


def test_environment_decides_when_the_script_says_nothing(tmp_path, monkeypatch):
    s = double_pendulum()
    item = VisualItem3D(s, [0.0, 0.4], [[0.0, 0.0], [0.5, 0.5]])
    monkeypatch.setenv('ROS_VI_VISUAL', 'off')
    assert trep.visual.visualize_3d([item]) == 0         # returns at once
    path = str(tmp_path / 'from_env.gif')
    monkeypatch.setenv('ROS_VI_VISUAL', path)
    film = trep.visual.visualize_3d([item], fps=10, size=(64, 48))
    assert os.path.isfile(path) and film.frames == 4
    monkeypatch.setenv('ROS_VI_VISUAL', 'window')
    with pytest.raises(ValueError, match='ROS_VI_VISUAL'):
        trep.visual.visualize_3d([item])


def test_served_without_blocking():
    p, T, Q = swinging_puppet(steps=10)
    import socket
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    view = trep.visual.visualize_3d([PuppetVisual(p, T, Q)], serve=True, block=False,
                                    port=port)
    try:
        assert view.playback.playing and view.poses is not None
        assert set(view.nodes) == set(view.scene.body_names)
        view.playback.step()
        # pause (the Pause button's handler): otherwise the serving loop's playback may
        # draw another time between show() and the reads below
        view.playback._toggle(None)
        assert not view.playback.playing
        threading.Event().wait(3.0 / view.RATE)    # a redraw under way has finished
        g = view.poses
        view.show(T[-1])
        assert np.abs(view.poses - g).max() > 1e-3
        node = view.nodes[view.scene.body_names[0]]
        assert np.abs(np.asarray(node.position) - view.poses[0][:3, 3]).max() < 1e-12
    finally:
        view.stop()


def test_stlmodel_and_opengl_drawings(tmp_path):
    trimesh = pytest.importorskip('trimesh')
    path = str(tmp_path / 'box.stl')
    trimesh.creation.box(extents=(0.1, 0.2, 0.3)).export(path)
    s = double_pendulum()
    item = VisualItem3D(s, [0.0, 1.0], [[0.0, 0.0], [0.1, 0.1]])
    model = stlmodel(path, color=(1, 0, 0))
    item.attachDrawing('m1', model.draw)                 # as trep's scripts do
    with pytest.warns(trep.visual.VisualWarning, match='OpenGL'):
        item.attachDrawing('m2', lambda: None)
    scene = PlayerScene([item])
    assert len(scene.body_names) == 1                    # only the mesh is drawn
    v = scene.scene.vertices[scene.scene.vertex_link == 0]
    np.testing.assert_allclose(np.ptp(v, axis=0), [0.1, 0.2, 0.3], atol=1e-12)
    assert np.all(scene.scene.face_rgb[:, 0] == 1.0)
    with pytest.raises(FileNotFoundError, match='nothere.stl'):
        stlmodel(str(tmp_path / 'nothere.stl'))


def test_2d_item_is_seen_onto_its_plane(tmp_path):
    s = double_pendulum()
    item = VisualItem2D(s, [0.0, 0.5], [[0.0, 0.0], [0.5, 0.5]], plane='YZ')
    assert item.camera_direction() == pytest.approx((0.0, 0.0))
    assert VisualItem2D(s, plane='XZ').camera_direction() == pytest.approx((-90.0, 0.0))
    assert VisualItem2D(s, plane='XY').camera_direction()[1] == pytest.approx(90.0)
    film = trep.visual.visualize_2d([item], output=str(tmp_path / 'flat.gif'), fps=10,
                                    size=(64, 48))
    assert film.view.azimuth == pytest.approx(0.0) and film.view.elevation == 0.0
    with pytest.raises(ValueError, match='plane'):
        VisualItem2D(s, plane='XX')


def test_bad_items_are_named():
    s = double_pendulum()
    with pytest.raises(ValueError, match=r'q must be \(n, 2\)'):
        VisualItem3D(s, [0.0], [[0.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match='2 times but 1 configurations'):
        VisualItem3D(s, [0.0, 1.0], [[0.0, 0.0]])
    with pytest.raises(ValueError, match='increasing'):
        VisualItem3D(s, [1.0, 0.0], [[0.0, 0.0], [0.0, 0.0]])
    with pytest.raises(TypeError, match='not a VisualItem'):
        trep.visual.visualize_3d([s])
    with pytest.raises(ValueError, match='nothing to visualize'):
        trep.visual.visualize_3d([])


def test_marionette_script_runs_past_its_visual_call():
    """The end of trep's tase2012 marionette script (two PuppetVisuals side by side, trep's
    camera) as it is written, under the suite's ROS_VI_VISUAL=off."""
    assert os.environ.get(visual_items.VISUAL_ENV) == 'off'
    p, t, Qd = swinging_puppet(steps=5)
    reference1 = trep.puppets.PuppetVisual(p, t, Qd)
    closed_visual = trep.puppets.PuppetVisual(p, t, Qd + 0.01)
    reference2 = trep.puppets.PuppetVisual(p, t, Qd, offset=[0, 1, 0])
    open_visual = trep.puppets.PuppetVisual(p, t, Qd - 0.01, offset=[0, 1, 0])
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        result = trep.visual.visualize_3d([reference1, closed_visual, reference2,
                                           open_visual],
                                          camera_pos=[-2.038, 0.5134, 0.424],
                                          camera_ang=[-0.033, 0.0170, 0.0])
    assert result == 0
