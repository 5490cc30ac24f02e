"""The shapes of a robot description (ros_vi.urdf.link_geometry): what the XML says, the
triangles of each shape, meshes found (file://, relative, package://) or missing."""
import math
import os
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ros_vi.urdf import (URDFError, URDFParseError, URDFWarning, import_urdf,
                         link_geometry, load_urdf_text, origin_matrix)
from ros_vi.urdf.shapes import DEFAULT_RGBA, Shape, resolve_mesh
from ros_vi.resources import shipped_model

SHIPPED = ['acrobot', 'arm7', 'cartpole', 'pendulum']


def _floats(text):
    return [float(x) for x in text.split()]


def _expected_shapes(text, kind):
    """(link, type, params, origin) of every <visual>/<collision>, read with the standard
    library's XML parser (an oracle independent of urdf_parser_py)."""
    out = []
    for link in ET.fromstring(text).iter('link'):
        for el in link.findall(kind):
            o = el.find('origin')
            xyz = _floats(o.get('xyz', '0 0 0')) if o is not None else [0, 0, 0]
            rpy = _floats(o.get('rpy', '0 0 0')) if o is not None else [0, 0, 0]
            (g,) = list(el.find('geometry'))
            params = {k: (_floats(v) if k in ('size', 'scale') else
                          v if k == 'filename' else float(v)) for k, v in g.attrib.items()}
            out.append((link.get('name'), g.tag, params, origin_matrix(xyz, rpy)))
    return out


@pytest.mark.parametrize('model', SHIPPED)
@pytest.mark.parametrize('kind', ['visual', 'collision'])
def test_shipped_shapes_are_the_xml(model, kind):
    text = load_urdf_text(shipped_model(model))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', URDFWarning)     # arm7's meshes are not shipped
        shapes = link_geometry(text, kind)
    expected = _expected_shapes(text, kind)
    assert len(shapes) == len(expected)
    if kind == 'visual':
        assert shapes, 'every shipped model has visuals'
    for s, (link, gtype, params, origin) in zip(shapes, expected):
        assert (s.link, s.type, s.kind) == (link, gtype, kind)
        np.testing.assert_allclose(s.origin, origin, atol=1e-15)
        assert s.rgba == DEFAULT_RGBA          # no shipped model declares a material
        if gtype == 'box':
            np.testing.assert_array_equal(s.size, params['size'])
        elif gtype == 'cylinder':
            assert (s.radius, s.length) == (params['radius'], params['length'])
        elif gtype == 'sphere':
            assert s.radius == params['radius']
        else:
            assert s.filename == params['filename']
            np.testing.assert_array_equal(s.scale, params.get('scale', [1, 1, 1]))


def test_arm7_meshes_warn_once_per_file_and_are_kept_unresolved():
    """arm7's visual meshes are references that never resolve (its collision geometry is
    primitives, for the distance queries: it resolves without a warning)."""
    text = load_urdf_text(shipped_model('arm7'))
    with pytest.warns(URDFWarning) as record:
        shapes = link_geometry(text, 'visual')
    messages = [str(w.message) for w in record]
    files = [s.filename for s in shapes]
    assert len(messages) == len(set(files)) == len(files) == 8
    for s, message in zip(shapes, messages):
        assert s.type == 'mesh' and s.path is None and s.triangles() is None
        assert repr(s.link) in message and s.filename in message and 'not found' in message
    with warnings.catch_warnings():
        warnings.simplefilter('error', URDFWarning)
        collisions = link_geometry(text, 'collision')
    assert [s.link for s in collisions] == ['link_%d' % i for i in range(8)]
    assert all(s.type in ('cylinder', 'box') for s in collisions)


def _rotation(shape):
    return shape.origin[:3, :3]


@pytest.mark.parametrize('segments', [8, 24])
def test_primitive_triangles_span_the_primitive_and_enclose_its_volume(segments):
    origin = origin_matrix([0.3, -0.2, 0.5], [0.4, -0.7, 1.1])
    box = Shape('l', 'box', origin, size=np.array([0.3, 0.2, 0.1]))
    cyl = Shape('l', 'cylinder', origin, radius=0.05, length=0.7)
    sph = Shape('l', 'sphere', origin, radius=0.2)
    expected = {box: [0.3, 0.2, 0.1], cyl: [0.1, 0.1, 0.7], sph: [0.4, 0.4, 0.4]}
    wedge = 0.5 * segments * math.sin(2 * math.pi / segments)    # n-gon area / r^2
    volume = {box: 0.3 * 0.2 * 0.1, cyl: wedge * 0.05 ** 2 * 0.7}
    for shape, extents in expected.items():
        v, f = shape.triangles(segments)
        local = (v - origin[:3, 3]) @ _rotation(shape)       # back in the shape's frame
        np.testing.assert_allclose(local.max(axis=0), np.array(extents) / 2, atol=1e-12)
        np.testing.assert_allclose(local.min(axis=0), -np.array(extents) / 2, atol=1e-12)
        # closed and wound outwards: the signed volume is the solid's (positive)
        a, b, c = local[f[:, 0]], local[f[:, 1]], local[f[:, 2]]
        signed = np.einsum('ij,ij->i', a, np.cross(b, c)).sum() / 6
        if shape in volume:
            assert signed == pytest.approx(volume[shape], rel=1e-12)
        else:
            assert 0.6 * 4 / 3 * math.pi * 0.2 ** 3 < signed < 4 / 3 * math.pi * 0.2 ** 3
        # every edge is shared by exactly two faces, in opposite directions
        edges = np.vstack([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
        assert len({tuple(e) for e in edges.tolist()}) == len(edges)
        assert {tuple(e) for e in edges.tolist()} == {tuple(e) for e in edges[:, ::-1].tolist()}
    with pytest.raises(ValueError, match='multiple of 4'):
        cyl.triangles(10)


@pytest.mark.parametrize('segments', [8, 24])
def test_capsule_triangles_span_it_and_are_a_closed_solid_inside_it(segments):
    origin = origin_matrix([0.3, -0.2, 0.5], [0.4, -0.7, 1.1])
    r, length = 0.05, 0.4
    cap = Shape('l', 'capsule', origin, radius=r, length=length)
    v, f = cap.triangles(segments)
    local = (v - origin[:3, 3]) @ _rotation(cap)
    np.testing.assert_allclose(local.max(axis=0), [r, r, length / 2 + r], atol=1e-12)
    np.testing.assert_allclose(local.min(axis=0), [-r, -r, -length / 2 - r], atol=1e-12)
    # every vertex on the capsule's surface: at distance r from its axis segment
    axis = np.column_stack([np.zeros((len(local), 2)),
                            np.clip(local[:, 2], -length / 2, length / 2)])
    np.testing.assert_allclose(np.linalg.norm(local - axis, axis=1), r, rtol=1e-12)
    assert all(cap.contains(p) for p in v)
    # closed, wound outwards, its volume below the capsule's and above the inscribed
    # prism's (the polygon's area times the cylinder's length)
    a, b, c = local[f[:, 0]], local[f[:, 1]], local[f[:, 2]]
    signed = np.einsum('ij,ij->i', a, np.cross(b, c)).sum() / 6
    wedge = 0.5 * segments * math.sin(2 * math.pi / segments)
    assert wedge * r * r * length < signed < math.pi * r * r * (length + 4 / 3 * r)
    edges = np.vstack([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    assert len({tuple(e) for e in edges.tolist()}) == len(edges)
    assert {tuple(e) for e in edges.tolist()} == {tuple(e) for e in edges[:, ::-1].tolist()}


def test_capsule_is_read_from_urdf_1_2():
    text = ('<robot name="r"><link name="a"><visual><origin xyz="0 0 0.3"/><geometry>'
            '<capsule radius="0.05" length="0.4"/></geometry></visual>'
            '<collision><geometry><capsule radius="0.06" length="0.5"/></geometry></collision>'
            '</link></robot>')
    (vis,), (col,) = link_geometry(text), link_geometry(text, 'collision')
    assert (vis.type, vis.radius, vis.length, vis.origin[2, 3]) == ('capsule', 0.05, 0.4, 0.3)
    assert (col.type, col.radius, col.length) == ('capsule', 0.06, 0.5)
    assert vis.contains([0.0, 0.0, 0.3 + 0.2 + 0.049]) and \
        not vis.contains([0.0, 0.0, 0.3 + 0.2 + 0.051])
    assert vis.contains([0.049, 0.0, 0.3 + 0.2]) and not vis.contains([0.04, 0.04, 0.3])
    with pytest.raises(URDFError, match=r"link 'a' <visual> 1 capsule radius, length"):
        link_geometry(text.replace('radius="0.05"', 'radius="-1"'))


def test_contains_follows_the_shape():
    origin = origin_matrix([0, 0, -1], [0, 0, 0])
    bob = Shape('l', 'sphere', origin, radius=0.05)
    assert not bob.contains([0, 0, 0]) and bob.contains([0, 0.04, -1])
    rod = Shape('l', 'cylinder', origin_matrix([0, 0, 0.5], [0, 0, 0]), radius=0.01, length=1)
    assert rod.contains([0, 0, 0]) and not rod.contains([0.02, 0, 0.5])
    box = Shape('l', 'box', np.eye(4), size=np.array([1.0, 0.2, 0.2]))
    assert box.contains([0.5, 0.1, -0.1]) and not box.contains([0.5, 0.11, 0])


MATERIALS = '''<robot name="colours">
  <material name="blue"><color rgba="0 0 0.8 1"/></material>
  <material name="skin"><texture filename="skin.png"/></material>
  <link name="a">
    <visual><geometry><box size="1 1 1"/></geometry><material name="blue"/></visual>
    <visual><geometry><box size="1 1 1"/></geometry>
      <material name="blue"><color rgba="1 0 0 1"/></material></visual>
    <visual><geometry><sphere radius="1"/></geometry>
      <material name="orange"><color rgba="1 0.5 0 0.5"/></material></visual>
    <collision><geometry><sphere radius="1"/></geometry></collision>
  </link>
  <link name="b">
    <visual><geometry><sphere radius="1"/></geometry><material name="orange"/></visual>
    <visual><geometry><sphere radius="1"/></geometry><material name="skin"/></visual>
    <visual><geometry><sphere radius="1"/></geometry></visual>
    <visual><geometry><sphere radius="1"/></geometry><material name="ghost"/></visual>
    <visual><geometry><sphere radius="1"/></geometry><material name="ghost"/></visual>
  </link>
  <joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>
</robot>'''


def test_colours_follow_urdfdom():
    with pytest.warns(URDFWarning, match=r"link 'b' <visual> 4: material 'ghost' is not "
                                         r"defined") as record:
        shapes = link_geometry(MATERIALS)
    assert len([w for w in record if 'ghost' in str(w.message)]) == 1     # once per name
    assert [s.rgba for s in shapes] == [
        (0, 0, 0.8, 1),         # robot-level material
        (0, 0, 0.8, 1),         # a robot-level name wins over the visual's own colour
        (1, 0.5, 0, 0.5),       # the visual's colour ...
        (1, 0.5, 0, 0.5),       # ... and its name, used by a later link
        DEFAULT_RGBA,           # texture only
        DEFAULT_RGBA,           # no material
        DEFAULT_RGBA, DEFAULT_RGBA]     # undefined
    assert [s.material for s in shapes] == ['blue', 'blue', 'orange', 'orange', 'skin', None,
                                            'ghost', 'ghost']
    (collision,) = link_geometry(MATERIALS, 'collision')
    assert (collision.link, collision.kind, collision.rgba) == ('a', 'collision', DEFAULT_RGBA)


@pytest.mark.parametrize('body, culprit', [
    ('<visual><geometry><sphere radius="-1"/></geometry></visual>',
     r"link 'a' <visual> 1 sphere radius must be >= 0"),
    ('<visual><geometry><box size="1 nan 1"/></geometry></visual>',
     r"link 'a' <visual> 1 box size: numbers must be finite"),
    ('<collision><geometry><cylinder radius="1" length="-2"/></geometry></collision>',
     r"link 'a' <collision> 1 cylinder radius, length must be >= 0"),
    ('<visual><geometry><mesh filename="m.stl" scale="1 -1 1"/></geometry></visual>',
     r"link 'a' <visual> 1 mesh scale must be >= 0"),
    ('<visual><geometry><sphere radius="1"/></geometry>'
     '<material name="m"><color rgba="1 2 0 1"/></material></visual>',
     r"link 'a' <visual> 1 <material 'm'> color rgba must be 4 numbers in \[0, 1\]"),
    ('<visual><origin xyz="0 0 inf"/><geometry><sphere radius="1"/></geometry></visual>',
     r"link 'a' <visual> 1 origin xyz: numbers must be finite"),
])
def test_malformed_geometry_is_refused_naming_the_link(body, culprit):
    text = '<robot name="r"><link name="a">%s</link></robot>' % body
    kind = 'collision' if '<collision>' in body else 'visual'
    with pytest.raises(URDFError, match=culprit):
        link_geometry(text, kind)


def test_an_unknown_geometry_is_a_parse_error_naming_the_link():
    text = ('<robot name="r">\n<link name="a">\n<visual><geometry><cone radius="1" '
            'length="2"/></geometry></visual></link></robot>')
    for read in (link_geometry, import_urdf):
        with pytest.raises(URDFParseError, match=r"link 'a' <visual> \(line 3\): unknown "
                                                 r"geometry <cone>"):
            read(text)
    with pytest.raises(URDFParseError, match=r"link\[@name='a'\]/visual\[1\]: Required "
                                             r"element not set in XML: geometry"):
        link_geometry('<robot name="r"><link name="a"><visual/></link></robot>')
    with pytest.raises(ValueError, match="kind must be 'visual' or 'collision'"):
        link_geometry(text, 'inertial')


# ---------------------------------------------------------------------------- meshes
EXTENTS = np.array([0.1, 0.2, 0.3])
SCALE = np.array([2.0, 1.0, 0.5])


def _write_mesh(path):
    import trimesh
    mesh = trimesh.creation.box(extents=EXTENTS)
    mesh.apply_translation([0.05, 0.0, 0.0])
    mesh.export(str(path))
    return mesh


def _robot(filename, origin='0 0 0.25'):
    return ('<robot name="m"><link name="base"/><link name="arm"><visual><origin xyz="%s"/>'
            '<geometry><mesh filename="%s" scale="%s"/></geometry></visual></link>'
            '<joint name="j" type="fixed"><parent link="base"/><child link="arm"/></joint>'
            '</robot>' % (origin, filename, ' '.join('%g' % s for s in SCALE)))


def _check_mesh(shape, source, path):
    assert shape.path == os.path.normpath(str(path))
    v, f = shape.triangles()
    assert (len(v), len(f)) == (len(source.vertices), len(source.faces)) == (8, 12)
    lo, hi = v.min(axis=0), v.max(axis=0)
    np.testing.assert_allclose(hi - lo, EXTENTS * SCALE, atol=1e-6)
    # the mesh's own offset is scaled, then the visual origin applied
    np.testing.assert_allclose((hi + lo) / 2, [0.05 * 2.0, 0.0, 0.25], atol=1e-6)


@pytest.mark.parametrize('suffix', ['.stl', '.obj', '.dae'])
def test_a_mesh_by_file_uri_and_relative_path_loads_scaled(tmp_path, suffix):
    path = tmp_path / 'meshes' / ('part' + suffix)
    path.parent.mkdir()
    source = _write_mesh(path)
    (shape,) = link_geometry(_robot('file://%s' % path))
    _check_mesh(shape, source, path)
    with warnings.catch_warnings():
        warnings.simplefilter('error')        # found: no warning
        (shape,) = link_geometry(_robot('meshes/part' + suffix), base_dir=str(tmp_path))
    _check_mesh(shape, source, path)


def test_a_relative_mesh_without_base_dir_is_taken_from_the_current_directory(
        tmp_path, monkeypatch):
    source = _write_mesh(tmp_path / 'part.stl')
    monkeypatch.chdir(tmp_path)
    (shape,) = link_geometry(_robot('part.stl'))
    _check_mesh(shape, source, tmp_path / 'part.stl')


def test_a_package_uri_resolves_through_the_ament_index(tmp_path, monkeypatch):
    prefix = tmp_path / 'install'
    marker = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages'
    marker.mkdir(parents=True)
    (marker / 'my_robot_description').write_text('')
    path = prefix / 'share' / 'my_robot_description' / 'meshes' / 'part.stl'
    path.parent.mkdir(parents=True)
    source = _write_mesh(path)
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(prefix))
    (shape,) = link_geometry(_robot('package://my_robot_description/meshes/part.stl'))
    _check_mesh(shape, source, path)
    with pytest.warns(URDFWarning, match=r"mesh 'package://other_pkg/part.stl' of link "
                                         r"'arm' not found \(cannot resolve"):
        (shape,) = link_geometry(_robot('package://other_pkg/part.stl'))
    assert shape.path is None and shape.triangles() is None


def test_missing_and_unreadable_meshes_warn_and_are_kept(tmp_path):
    assert resolve_mesh('http://example.invalid/a.stl') == (
        None, "unsupported URI scheme 'http'")
    path, reason = resolve_mesh('nope.stl', str(tmp_path))
    assert path is None and reason == 'no such file %s' % (tmp_path / 'nope.stl')
    two_links = _robot('nope.stl').replace(
        '</robot>', '<link name="tool"><visual><geometry><mesh filename="nope.stl"/>'
        '</geometry></visual></link><joint name="k" type="fixed"><parent link="arm"/>'
        '<child link="tool"/></joint></robot>')
    with pytest.warns(URDFWarning) as record:
        shapes = link_geometry(two_links, base_dir=str(tmp_path))
    (message,) = [str(w.message) for w in record]          # one per file
    assert "mesh 'nope.stl' of links 'arm', 'tool' not found" in message
    assert [s.path for s in shapes] == [None, None]
    bad = tmp_path / 'bad.stl'
    bad.write_bytes(b'solid nothing here\nthis is not an stl\n' * 3)
    (shape,) = link_geometry(_robot('bad.stl'), base_dir=str(tmp_path))
    with pytest.warns(URDFWarning, match=r"link 'arm': mesh 'bad.stl' .* cannot be read: "
                                         r"no triangles"):
        assert shape.triangles() is None
    with warnings.catch_warnings():
        warnings.simplefilter('error')        # warned once: not read again
        assert shape.triangles() is None
    (tmp_path / 'part.bogus').write_text('?')     # a reader that raises
    (shape,) = link_geometry(_robot('part.bogus'), base_dir=str(tmp_path))
    with pytest.warns(URDFWarning, match=r"link 'arm': mesh 'part.bogus' .* cannot be read: "
                                         r"\w+Error"):
        assert shape.triangles() is None


def test_a_mesh_file_larger_than_the_limit_is_not_read(tmp_path, monkeypatch):
    """A 2 GiB sparse .stl took 28 s and 4.4 GB before "no triangles"; a file beyond
    MAX_MESH_BYTES is not read (here the limit is lowered to 1 MiB, the file 2 MiB)."""
    from ros_vi.urdf import shapes
    monkeypatch.setattr(shapes, 'MAX_MESH_BYTES', 1 << 20)
    with open(tmp_path / 'big.stl', 'wb') as fh:
        fh.truncate(2 << 20)                          # sparse: nothing written
    (shape,) = link_geometry(_robot('big.stl'), base_dir=str(tmp_path))
    with pytest.warns(URDFWarning, match=r"link 'arm': mesh 'big.stl' \(.*big.stl\) is 2 MiB, "
                                         r"more than the 1 MiB a mesh file may have "
                                         r"\(MAX_MESH_BYTES\); drawn without it"):
        assert shape.triangles() is None
    assert shape.problem == 'is 2 MiB, more than the 1 MiB a mesh file may have ' \
                            '(MAX_MESH_BYTES)'


def ament_mesh(prefix, package, monkeypatch):
    """``prefix/share/package/part.stl``, a box mesh of an installed package (``prefix`` on
    AMENT_PREFIX_PATH, the package in its ament index); returns its path."""
    marker = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages'
    marker.mkdir(parents=True)
    (marker / package).write_text('')
    path = prefix / 'share' / package / 'part.stl'
    path.parent.mkdir(parents=True)
    _write_mesh(path)
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(prefix))
    return path


def test_packages_only_reads_package_meshes_inside_their_package(tmp_path, monkeypatch):
    """For a description from a ROS graph: file://, absolute and relative names and a
    package:// path out of its package are refused without looking at the file."""
    path = ament_mesh(tmp_path / 'install', 'pkg', monkeypatch)
    assert resolve_mesh('package://pkg/part.stl', packages_only=True) == (str(path), '')
    only = 'a description from the ROS graph may name package:// meshes of installed ' \
           'packages only'
    for name in ('file://%s' % path, str(path), 'part.stl'):
        assert resolve_mesh(name, str(path.parent), packages_only=True) == (None, only)
    for name in ('package://pkg/../pkg/../../share/pkg/part.stl', 'package://pkg//etc/x'):
        assert resolve_mesh(name, packages_only=True) == (
            None, "not a file inside package 'pkg'")
    assert resolve_mesh('package://other/part.stl', packages_only=True) == (
        None, "package 'other' is not installed")
    assert resolve_mesh('package://pkg/none.stl', packages_only=True) == (
        None, "no such file in package 'pkg'")
