"""Recordings drawn as animations (ros_vi.visual, ``ros-vi animate``): the frames show the
robot where its forward kinematics puts it, GIF/MP4 have the frame count the options ask
for, missing meshes fall back to the skeleton, bad input exits 2 naming the culprit."""
import math
import os
import warnings

import numpy as np
import pytest
from PIL import Image, ImageSequence

from ros_vi.cli import main
from ros_vi.recording import load_recording, open_writer, save_recording
from ros_vi.resources import shipped_model
from ros_vi.simulation import Simulation
from ros_vi.urdf import URDFWarning, load_urdf_text, origin_matrix
from ros_vi.visual import animate, fit_view, render_frame
from ros_vi.visual.playback import config_positions, frame_times, link_pose_track, load_robot
from ros_vi.visual.render import BONE_RGBA, JOINT_RGBA

LABEL_ROWS = 40       # the time label's band at the top of a frame


def _record(path, model, initial, duration=1.0, rate=100.0):
    """A free run of a shipped model written to ``path``; returns the Recording."""
    text = load_urdf_text(shipped_model(model))
    sim = Simulation.from_urdf(text, rate=rate, initial_positions=initial)
    with open_writer(path, text, {'model': model}) as writer:
        writer.append(sim.state())
        for _ in range(int(round(duration * rate))):
            sim.tick()
            writer.append(sim.state())
    return load_recording(path)


@pytest.fixture(scope='module')
def swing(tmp_path_factory):
    """The pendulum swinging from 1 rad for 1 s."""
    path = tmp_path_factory.mktemp('swing') / 'swing.npz'
    rec = _record(path, 'pendulum', {'theta': 1.0})
    assert rec.t[-1] == pytest.approx(1.0)
    return path, rec


def _frames(path):
    with Image.open(path) as im:
        return [np.asarray(f.convert('RGB'), dtype=float) for f in ImageSequence.Iterator(im)]


def _gif_durations(path):
    with Image.open(path) as im:
        return [f.info['duration'] for f in ImageSequence.Iterator(im)]


def _shade_of(rgb, base):
    """Which pixels ``rgb`` (..., 3) are a shade of the colour ``base`` (rgba in [0, 1]):
    lit between ambient and full (GIF's palette and MP4's compression move colours by a few
    levels)."""
    scale = np.asarray(rgb, float) / (255 * np.asarray(base[:3]))
    return (scale.mean(axis=-1) > 0.3) & (scale.mean(axis=-1) < 1.08) & \
        (np.ptp(scale, axis=-1) < 0.1)


def _shows(img, xy, base, r=3):
    """A quarter at least of the pixels within ``r`` of ``xy`` [px] are shades of ``base``
    (lines drawn over a point, such as axes, do not hide it)."""
    a = np.asarray(img, dtype=float)[..., :3]
    x, y = (int(round(c)) for c in xy)
    window = a[max(0, y - r):y + r + 1, max(0, x - r):x + r + 1]
    return _shade_of(window, base).mean() >= 0.25


def _robot_pixels(frame):
    """Pixels darker than any of the stage's colours and grey: the robot's."""
    a = np.asarray(frame, dtype=float)
    return int(((a.mean(axis=2) < 170) & (np.ptp(a, axis=2) < 30)).sum())


def test_the_stage_is_lighter_than_the_robot():
    """What makes _robot_pixels meaningful: no colour of the background, ground, grid or
    shadow is dark enough to be counted."""
    from ros_vi.visual import render as r
    for colour in (r.BACKGROUND_TOP, r.BACKGROUND_BOTTOM, r.GROUND, r.GRID, r.SHADOW):
        assert np.mean(colour) > 170


# ------------------------------------------------------------------ kinematics of frames
def test_link_poses_are_the_forward_kinematics_of_the_recorded_joints():
    text = load_urdf_text(shipped_model('cartpole'))
    system, scene = load_robot(text)
    q = np.array([[0.0, 0.0], [0.4, -0.3], [-1.2, 2.0]])
    track = link_pose_track(system, scene, q)
    for (x, th), poses in zip(q, track):
        g = dict(zip(scene.links, poses))
        cart = origin_matrix([x, 0, 1.0], [0, 0, 0])     # rail 1 m up, slide along x
        pole = cart @ origin_matrix([0, 0, 0.05], [0, th, 0])    # pivot on top, about y
        np.testing.assert_allclose(g['world'], np.eye(4), atol=1e-15)
        np.testing.assert_allclose(g['rail'], origin_matrix([0, 0, 1.0], [0, 0, 0]),
                                   atol=1e-15)
        np.testing.assert_allclose(g['cart'], cart, atol=1e-14)
        np.testing.assert_allclose(g['pole'], pole, atol=1e-14)


MIMIC = '''<robot name="gripper">
  <link name="palm"><visual><geometry><box size="0.1 0.1 0.02"/></geometry></visual></link>
  <link name="left"><inertial><mass value="0.1"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial>
    <visual><origin xyz="0 0 0.03"/><geometry><box size="0.01 0.02 0.06"/></geometry>
    </visual></link>
  <link name="right"><inertial><mass value="0.1"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>
  <joint name="left" type="prismatic"><parent link="palm"/><child link="left"/>
    <origin xyz="0 0 0.01"/><axis xyz="1 0 0"/>
    <limit lower="-0.05" upper="0.05" effort="10" velocity="1"/></joint>
  <joint name="right" type="prismatic"><parent link="palm"/><child link="right"/>
    <origin xyz="0 0 0.01"/><axis xyz="1 0 0"/><mimic joint="left" multiplier="-1"/>
    <limit lower="-0.05" upper="0.05" effort="10" velocity="1"/></joint>
</robot>'''


def _recording(t, names, position, urdf=''):
    from ros_vi.recording import Recording
    position = np.asarray(position, float)
    zeros = np.zeros_like(position)
    return Recording(np.asarray(t, float), list(names), position, zeros, zeros,
                     np.zeros(len(t)), urdf, {})


def test_positions_are_interpolated_and_mimic_joints_follow_their_leader():
    system, scene = load_robot(MIMIC)
    # the recording's mimic column is ignored: the leader decides
    rec = _recording([0.0, 1.0, 2.0], ['left', 'right'], [[0.0, 9.0], [0.02, 9.0],
                                                         [0.04, 9.0]], MIMIC)
    q = config_positions(system, rec, [0.0, 0.5, 1.0, 1.75, 2.0])
    np.testing.assert_allclose(q[:, 0], [0.0, 0.01, 0.02, 0.035, 0.04], atol=1e-15)
    track = link_pose_track(system, scene, q)
    for x, poses in zip(q[:, 0], track):
        g = dict(zip(scene.links, poses))
        np.testing.assert_allclose(g['left'][:3, 3], [x, 0, 0.01], atol=1e-15)
        np.testing.assert_allclose(g['right'][:3, 3], [-x, 0, 0.01], atol=1e-15)


def test_frame_times_follow_fps_and_speed():
    t = np.linspace(0.0, 2.0, 201)
    np.testing.assert_allclose(frame_times(t, fps=10), np.arange(20) / 10)
    np.testing.assert_allclose(frame_times(t, fps=10, speed=2), np.arange(10) / 5)
    np.testing.assert_allclose(frame_times(t, fps=4, start=0.5, end=1.5), 0.5 + np.arange(4) / 4)
    assert len(frame_times([3.0], fps=25)) == 1            # one sample: one frame
    for kwargs, culprit in (({'fps': 0}, 'fps must be > 0'), ({'speed': -1}, 'speed must'),
                            ({'start': 2.5}, r'start 2.5 s is outside the recording \(0 to 2'),
                            ({'start': 1.5, 'end': 1.0}, 'end 1 s is before start 1.5 s')):
        with pytest.raises(ValueError, match=culprit):
            frame_times(t, **kwargs)


# ---------------------------------------------------------------------------- pictures
def test_a_still_frame_shows_the_pendulum_where_its_kinematics_put_it(tmp_path):
    text = load_urdf_text(shipped_model('pendulum'))
    path = tmp_path / 'still.png'
    img = render_frame(text, path, positions={'theta': 0.7}, size=(320, 240))
    with Image.open(path) as saved:
        assert saved.size == (320, 240) and saved.format == 'PNG'
        np.testing.assert_array_equal(np.asarray(saved), np.asarray(img))
    system, scene = load_robot(text)
    track = link_pose_track(system, scene, [[0.7]])
    view = fit_view(scene, track, (320, 240))
    bob = track[0][scene.links.index('pendulum')] @ [0, 0, -1, 1]
    np.testing.assert_allclose(bob[:3], [0, math.sin(0.7), -math.cos(0.7)], atol=1e-12)
    (bob_px,), _ = view.project([bob[:3]])
    assert _shows(img, bob_px, (0.7, 0.7, 0.7))
    # the massless rod from the pivot to the bob
    (rod_px,), _ = view.project([0.5 * bob[:3]])
    assert _shows(img, rod_px, BONE_RGBA, r=1)
    assert not _shows(img, rod_px + [40, 0], BONE_RGBA, r=1)      # nothing beside it
    with pytest.raises(ValueError, match="no joint 'phi' in the model; it has theta"):
        render_frame(text, positions={'phi': 1.0})


def test_the_camera_frames_every_pose_of_the_motion(swing):
    _, rec = swing
    system, scene = load_robot(rec.robot_description)
    track = link_pose_track(system, scene, config_positions(system, rec, rec.t))
    for az, el in ((None, 20.0), (0.0, 0.0), (135.0, 60.0), (-90.0, 90.0), (30.0, -45.0)):
        view = fit_view(scene, track, (200, 100), azimuth=az, elevation=el)
        px, depth = view.project(np.vstack([scene.world_points(g) for g in track]))
        assert (depth > 0).all()
        assert (px >= 0).all() and (px[:, 0] <= 200).all() and (px[:, 1] <= 100).all()
        # and tightly: the motion spans most of the picture one way or the other
        span = (px.max(axis=0) - px.min(axis=0)) / [200, 100]
        assert span.max() > 0.6
    view = fit_view(scene, track, (200, 100), target=[0.0, 0.0, -0.5], distance=6.0)
    assert view.distance == 6.0 and list(view.target) == [0.0, 0.0, -0.5]
    np.testing.assert_allclose(np.linalg.norm(view.position - view.target), 6.0)
    (centre,), _ = view.project([[0.0, 0.0, -0.5]])
    np.testing.assert_allclose(centre, [100, 50], atol=1e-9)     # the target is in the middle
    for kwargs, culprit in (({'elevation': 91}, r'elevation must be in \[-90, 90\]'),
                            ({'azimuth': math.inf}, 'azimuth must be finite'),
                            ({'distance': 0.0}, 'distance must be finite and > 0'),
                            ({'fov': 180}, r'fov must be in \(0, 180\)'),
                            ({'target': [0, 0]}, 'target must be 3 finite numbers')):
        with pytest.raises(ValueError, match=culprit):
            fit_view(scene, track, **kwargs)


@pytest.mark.parametrize('fps, speed, expected', [(20, 1.0, 20), (30, 1.0, 30), (10, 2.0, 5),
                                                  (10, 0.5, 20)])
def test_gif_has_fps_times_duration_over_speed_frames(tmp_path, swing, fps, speed, expected):
    _, rec = swing
    out = tmp_path / 'swing.gif'
    result = animate(rec, out, fps=fps, speed=speed, size=(160, 120), supersample=1)
    assert result.frames == expected == round(fps * 1.0 / speed)
    assert result.duration == pytest.approx(expected / fps)
    with Image.open(out) as im:
        assert im.n_frames == expected and im.size == (160, 120)
    # GIF delays are centiseconds: spread so that the playback lasts frames / fps
    assert sum(_gif_durations(out)) == pytest.approx(1000 * expected / fps, abs=10)


def test_gif_frames_show_the_swing(tmp_path, swing):
    _, rec = swing
    out = tmp_path / 'swing.gif'
    result = animate(rec, out, fps=10, size=(320, 240))
    frames = _frames(out)
    assert len(frames) == result.frames == 10
    system, scene = load_robot(rec.robot_description)
    times = frame_times(rec.t, fps=10)
    track = link_pose_track(system, scene, config_positions(system, rec, times))
    bob_link = scene.links.index('pendulum')
    previous = None
    for frame, poses in zip(frames, track):
        assert frame.mean(axis=2).std() > 10                # not blank ...
        assert _robot_pixels(frame) > 200                   # ... the robot is there
        bob = poses[bob_link] @ [0, 0, -1, 1]
        (px,), _ = result.view.project([bob[:3]])
        assert _shows(frame, px, (0.7, 0.7, 0.7))
        if previous is not None:       # the pendulum moves: the picture changes
            moved = np.abs(frame - previous).max(axis=2)[LABEL_ROWS:] > 30
            assert moved.sum() > 50
        previous = frame


def test_a_robot_at_rest_gives_identical_pictures_but_for_the_time(tmp_path):
    text = load_urdf_text(shipped_model('pendulum'))
    rec = _recording(np.linspace(0, 1, 11), ['theta'], np.full((11, 1), 0.3), text)
    out = tmp_path / 'rest.gif'
    animate(rec, out, fps=5, size=(160, 120))
    frames = _frames(out)
    assert len(frames) == 5
    for a, b in zip(frames, frames[1:]):
        np.testing.assert_array_equal(a[LABEL_ROWS:], b[LABEL_ROWS:])
        assert not np.array_equal(a[:LABEL_ROWS], b[:LABEL_ROWS])      # t = ... changes


def test_mp4_is_written_and_read_back_with_the_expected_frames(tmp_path, swing):
    import imageio.v2 as imageio
    _, rec = swing
    out = tmp_path / 'swing.mp4'
    result = animate(rec, out, fps=20, speed=1.0, size=(320, 240))
    assert result.frames == 20
    with imageio.get_reader(str(out)) as reader:
        meta = reader.get_meta_data()
        frames = [np.asarray(f, dtype=float) for f in reader]
    assert len(frames) == 20 and meta['fps'] == pytest.approx(20)
    assert frames[0].shape == (240, 320, 3)
    assert all(f.mean(axis=2).std() > 10 and _robot_pixels(f) > 200 for f in frames)
    assert np.abs(frames[0] - frames[10]).max(axis=2)[LABEL_ROWS:].max() > 60


def test_missing_meshes_warn_and_the_skeleton_is_drawn(tmp_path):
    rec = _record(tmp_path / 'arm.npz', 'arm7', {'joint_2': 0.6, 'joint_4': -1.0},
                  duration=0.2)
    out = tmp_path / 'arm.gif'
    with pytest.warns(URDFWarning, match=r"mesh 'package://arm7_description/meshes/"
                                         r"link_4.stl' of link 'link_4' not found"):
        result = animate(rec, out, fps=10, size=(320, 240))
    frames = _frames(out)
    assert len(frames) == result.frames == 2
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', URDFWarning)
        system, scene = load_robot(rec.robot_description)
    assert scene.drawn_links == []         # nothing to draw but the skeleton
    track = link_pose_track(system, scene, config_positions(system, rec, [0.0]))
    # the joint balls of the skeleton sit on the link origins
    for link in ('link_2', 'link_4', 'link_6'):
        origin = track[0][scene.links.index(link)][:3, 3]
        (px,), _ = result.view.project([origin])
        assert _shows(frames[0], px, JOINT_RGBA)
    assert _robot_pixels(frames[0]) > 200


def test_a_link_without_visual_is_drawn_as_a_bone_and_a_shape_away_from_its_joint_hangs_on_a_rod():
    text = load_urdf_text(shipped_model('pendulum'))
    system, scene = load_robot(text)
    kinds = sorted((s.link, s.type) for s in scene.skeleton)
    # the bob is 1 m from its pivot: a rod and a pivot ball, both on the pendulum link
    assert kinds == [('pendulum', 'cylinder'), ('pendulum', 'sphere')]
    rod = [s for s in scene.skeleton if s.type == 'cylinder'][0]
    assert rod.length == pytest.approx(1.0)
    np.testing.assert_allclose(rod.origin[:3, 3], [0, 0, -0.5])
    system, scene = load_robot(MIMIC)
    # 'right' has no visual: a bone in the palm frame up to its joint, a ball at its origin
    bones = [(s.link, s.type, s.length) for s in scene.skeleton]
    assert bones == [('palm', 'cylinder', pytest.approx(0.01)), ('right', 'sphere', None)]


# ---------------------------------------------------------------------------- the CLI
def test_cli_writes_the_gif_next_to_the_recording_by_default(tmp_path, swing, capsys):
    path, _ = swing
    local = tmp_path / 'run.npz'
    local.write_bytes(path.read_bytes())
    assert main(['animate', str(local), '--fps', '10', '--speed', '2', '--size', '160x120',
                 '--view', '0,10', '--frames']) == 0
    out = capsys.readouterr().out
    gif = tmp_path / 'run.gif'
    assert 'animation: %s (5 frames at 10 fps, 0.5 s' % gif in out
    with Image.open(gif) as im:
        assert im.n_frames == 5 and im.size == (160, 120)


def test_cli_draws_an_mcap_recording_from_the_urdf_it_carries(tmp_path, swing, capsys):
    _, rec = swing
    bag = tmp_path / 'run.mcap'
    save_recording(rec, bag)
    assert load_recording(bag).robot_description == rec.robot_description
    assert main(['animate', str(bag), '--fps', '8', '--size', '160x120']) == 0
    assert 'run.gif (8 frames at 8 fps' in capsys.readouterr().out
    with Image.open(tmp_path / 'run.gif') as im:
        assert im.n_frames == 8


def test_cli_draws_a_csv_recording_with_the_model_given(tmp_path, swing, capsys):
    _, rec = swing
    csv = tmp_path / 'run.csv'
    save_recording(rec, csv)
    status = main(['animate', str(csv)])
    assert status == 2 and '--model' in capsys.readouterr().err
    assert main(['animate', str(csv), '--model', 'pendulum', '--out', str(tmp_path / 'r.mp4'),
                 '--fps', '5', '--start', '0.2', '--end', '0.8']) == 0
    assert 'r.mp4 (3 frames at 5 fps' in capsys.readouterr().out


@pytest.mark.parametrize('args, culprit', [
    (['--out', '{tmp}/run.avi'], "--out '{tmp}/run.avi': unknown file type '.avi' "
                                 "(use .gif, .mp4 or .png)"),
    (['--model', 'cartpole'], "the model's joints 'cart', 'pole' are not in the recording; "
                              "the recording's joints 'theta' are not in the model"),
    (['--model', 'nosuchmodel'], "unknown model 'nosuchmodel'"),
    (['--size', '640by480'], "--size '640by480': expected WIDTHxHEIGHT"),
    (['--size', '8x8'], 'size 8x8: width and height must be 16 to 8192 pixels'),
    (['--size', '321x240', '--out', '{tmp}/run.mp4'], 'size 321x240: an MP4 (yuv420p) needs '
                                                      'an even width and height'),
    (['--view', '10'], "--view '10': expected AZIMUTH,ELEVATION"),
    (['--view', '0,95'], "--view '0,95': elevation must be in [-90, 90] deg"),
    (['--view', 'nan,10'], "--view 'nan,10': azimuth must be finite"),
    (['--fps', '0'], '--fps must be finite and > 0, got 0.0'),
    (['--start', '5'], 'start 5 s is outside the recording (0 to 1 s)'),
    (['--out', '{tmp}/no/such/dir/run.gif'], "cannot write '{tmp}/no/such/dir/run.gif'"),
])
def test_cli_bad_input_exits_2_naming_the_culprit(tmp_path, swing, capsys, args, culprit):
    path, _ = swing
    args = [a.replace('{tmp}', str(tmp_path)) for a in args]
    assert main(['animate', str(path)] + args) == 2
    err = capsys.readouterr().err
    assert err.startswith('ros-vi animate: error: ')
    assert culprit.replace('{tmp}', str(tmp_path)) in err
    assert not [f for f in os.listdir(tmp_path) if f.endswith(('.gif', '.mp4'))]


def test_cli_names_a_missing_recording(tmp_path, capsys):
    assert main(['animate', str(tmp_path / 'nope.npz')]) == 2
    assert "recording '%s': no such file" % (tmp_path / 'nope.npz') in capsys.readouterr().err


def test_cli_prints_the_mesh_warnings_of_arm7(tmp_path, capsys):
    rec_path = tmp_path / 'arm.npz'
    _record(rec_path, 'arm7', {'joint_2': 0.6}, duration=0.1)
    assert main(['animate', str(rec_path), '--fps', '20', '--size', '160x120']) == 0
    captured = capsys.readouterr()
    warned = [l for l in captured.err.splitlines() if l.startswith('warning: ')]
    assert len(warned) == 8 and all('not found' in l for l in warned)
    assert 'animation: %s (2 frames' % (tmp_path / 'arm.gif') in captured.out


FLOATING = '''<robot name="drone">
  <link name="world"/>
  <link name="body"><inertial><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.02"/></inertial>
    <visual><geometry><box size="0.4 0.4 0.05"/></geometry></visual></link>
  <joint name="base" type="floating"><parent link="world"/><child link="body"/></joint>
</robot>'''


def test_a_floating_body_is_drawn_from_its_six_configs(tmp_path):
    names = ['base_x', 'base_y', 'base_z', 'base_yaw', 'base_pitch', 'base_roll']
    rec = _recording([0.0, 1.0], names, [[0, 0, 1, 0, 0, 0], [1, 0, 2, 0.5, 0, 0]], FLOATING)
    # a recording of the Euler-angle import: the model is read the same way
    system, scene = load_robot(FLOATING, joint_names=rec.joint_names)
    track = link_pose_track(system, scene, config_positions(system, rec, [0.5]))
    np.testing.assert_allclose(track[0][scene.links.index('body')],
                               origin_matrix([0.5, 0, 1.5], [0, 0, 0.25]), atol=1e-14)
    result = animate(rec, tmp_path / 'drone.gif', fps=4, size=(160, 120))
    assert result.frames == 4


def test_a_mesh_is_drawn_in_its_material_colour(tmp_path):
    import trimesh
    trimesh.creation.box(extents=[0.2, 0.2, 0.6]).export(str(tmp_path / 'arm.stl'))
    text = ('<robot name="m"><material name="red"><color rgba="0.9 0.1 0.1 1"/></material>'
            '<link name="base"/><link name="arm"><inertial><mass value="1"/>'
            '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>'
            '<visual><origin xyz="0 0 0.3"/><geometry><mesh filename="file://%s"/>'
            '</geometry><material name="red"/></visual></link>'
            '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/>'
            '<origin xyz="0 0 0.5"/><axis xyz="0 1 0"/>'
            '<limit lower="-2" upper="2" effort="1" velocity="1"/></joint></robot>'
            % (tmp_path / 'arm.stl'))
    with warnings.catch_warnings():
        warnings.simplefilter('error')          # the mesh is found: no warning
        img = render_frame(text, positions={'j': 0.5}, size=(320, 240))
        system, scene = load_robot(text)
    assert scene.drawn_links == ['arm']
    track = link_pose_track(system, scene, [[0.5]])
    view = fit_view(scene, track, (320, 240))
    centre = track[0][scene.links.index('arm')] @ [0, 0, 0.3, 1]
    (px,), _ = view.project([centre[:3]])
    assert _shows(img, px, (0.9, 0.1, 0.1), r=4)
    red = _shade_of(np.asarray(img, float), (0.9, 0.1, 0.1))
    assert red.sum() > 500                       # a box, not a speck


def test_a_still_of_a_recording_is_its_pose_at_that_time(swing):
    _, rec = swing
    img = render_frame(rec, t=0.5, size=(320, 240))
    system, scene = load_robot(rec.robot_description)
    q = config_positions(system, rec, [0.5])
    theta = np.interp(0.5, rec.t, rec.position[:, 0])
    assert q[0, 0] == theta
    # framed on the whole motion, as the animation is
    motion = link_pose_track(system, scene, config_positions(system, rec, rec.t))
    view = fit_view(scene, motion, (320, 240))
    (bob_px,), _ = view.project([[0.0, math.sin(theta), -math.cos(theta)]])
    assert _shows(img, bob_px, (0.7, 0.7, 0.7))
    with pytest.raises(ValueError, match=r't 7 s is outside the recording \(0 to 1 s\)'):
        render_frame(rec, t=7.0)
