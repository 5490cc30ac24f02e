"""ros_vi.resources: the one locator of shipped files (ament index, pip data files, editable
install), and the public xacro / URDF-text functions of ros_vi.urdf."""
import json
import os
import sys

import pytest

from ros_vi import resources
from ros_vi.control.presets import urdf_path
from ros_vi.resources import ResourceError, resolve_uri, share_directory, shipped_model
from ros_vi.urdf import (URDFError, URDFSecurityError, import_urdf, load_urdf_text,
                         xacro_to_urdf)


def _fake_share(root, models=('x',), index=False):
    """``root/share/ros_vi`` with package.xml and urdf/<model>.urdf (and the ament index
    marker of ros_vi when ``index``): the layout colcon and pip installs produce."""
    share = os.path.join(str(root), 'share', 'ros_vi')
    os.makedirs(os.path.join(share, 'urdf'))
    with open(os.path.join(share, 'package.xml'), 'w') as f:
        f.write('<package format="3"><name>ros_vi</name></package>\n')
    for name in models:
        with open(os.path.join(share, 'urdf', name + '.urdf'), 'w') as f:
            f.write('<robot name="%s"><link name="a"/></robot>\n' % name)
    if index:
        marker = os.path.join(str(root), 'share', 'ament_index', 'resource_index', 'packages')
        os.makedirs(marker)
        open(os.path.join(marker, 'ros_vi'), 'w').close()
    return share


@pytest.fixture
def no_ament(monkeypatch):
    monkeypatch.delenv('AMENT_PREFIX_PATH', raising=False)


def test_this_environment_finds_the_shipped_models(no_ament):
    share = share_directory()
    assert os.path.isfile(os.path.join(share, 'package.xml'))
    for name in ('pendulum', 'cartpole', 'acrobot', 'arm7'):
        path = shipped_model(name)
        assert path == os.path.join(share, 'urdf', name + '.urdf') and os.path.isfile(path)
        assert resolve_uri('package://ros_vi/urdf/%s.urdf' % name) == path
        assert urdf_path(name) == path
    assert os.path.isfile(resolve_uri('package://ros_vi/config/acrobot.yaml'))


class _FakeDistribution:
    """What importlib.metadata gives for a pip editable install: a dist-info holding
    direct_url.json (and no data files)."""
    files = []

    def __init__(self, direct_url):
        self._direct_url = direct_url

    def read_text(self, name):
        return self._direct_url if name == 'direct_url.json' else None

    def locate_file(self, path):
        return os.path.join('/nonexistent-site-packages', str(path))


def test_editable_install_uses_the_recorded_project_directory(tmp_path, monkeypatch,
                                                               no_ament):
    """In a development environment (pip install -e) the share folder is the project
    directory the installed distribution records, not a path relative to the source."""
    project = tmp_path / 'checkout'
    (project / 'urdf').mkdir(parents=True)
    (project / 'package.xml').write_text('<package format="3"><name>ros_vi</name></package>\n')
    (project / 'urdf' / 'w.urdf').write_text('<robot name="w"><link name="a"/></robot>\n')
    url = json.dumps({'url': project.as_uri(), 'dir_info': {'editable': True}})
    monkeypatch.setattr(sys, 'prefix', str(tmp_path / 'venv'))
    monkeypatch.setattr(resources, '_distributions', lambda: [_FakeDistribution(url)])
    assert share_directory() == str(project)
    assert shipped_model('w') == os.path.join(str(project), 'urdf', 'w.urdf')
    # a non-editable record is not taken for a project directory
    url = json.dumps({'url': project.as_uri(), 'dir_info': {}})
    monkeypatch.setattr(resources, '_distributions', lambda: [_FakeDistribution(url)])
    with pytest.raises(ResourceError, match='not an editable install'):
        share_directory()


def test_colcon_layout_on_the_ament_prefix_path_comes_first(tmp_path, monkeypatch):
    share = _fake_share(tmp_path / 'install', models=('x',), index=True)
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path / 'install'))
    assert share_directory() == share
    assert shipped_model('x') == os.path.join(share, 'urdf', 'x.urdf')
    assert resolve_uri('package://ros_vi/urdf/x.urdf') == shipped_model('x')
    with pytest.raises(ResourceError, match=r"shipped model 'acrobot' not found.*models: x"):
        shipped_model('acrobot')


def test_monkeypatched_ament_index_is_asked_first(tmp_path, monkeypatch):
    import ament_index_python.packages as ament
    share = _fake_share(tmp_path / 'prefix')
    asked = []

    def lookup(package):
        asked.append(package)
        return share
    monkeypatch.setattr(ament, 'get_package_share_directory', lookup)
    assert shipped_model('x') == os.path.join(share, 'urdf', 'x.urdf')
    assert resolve_uri('package://other_pkg/meshes/a.dae') == \
        os.path.join(share, 'meshes', 'a.dae')
    assert asked == ['ros_vi', 'other_pkg']


def test_pip_data_files_under_sys_prefix(tmp_path, monkeypatch, no_ament):
    share = _fake_share(tmp_path / 'venv', models=('y',))
    monkeypatch.setattr(sys, 'prefix', str(tmp_path / 'venv'))
    assert share_directory() == share
    assert shipped_model('y') == os.path.join(share, 'urdf', 'y.urdf')


def test_nothing_found_names_every_place_tried(tmp_path, monkeypatch, no_ament):
    monkeypatch.setattr(sys, 'prefix', str(tmp_path))
    monkeypatch.setattr(resources, '_distributions', lambda: [])
    with pytest.raises(ResourceError) as info:
        share_directory()
    msg = str(info.value)
    assert 'ament index' in msg and os.path.join(str(tmp_path), 'share', 'ros_vi') in msg \
        and 'editable install' in msg
    with pytest.raises(ResourceError, match=r"cannot resolve 'package://ros_vi/urdf/a.urdf'"):
        resolve_uri('package://ros_vi/urdf/a.urdf')


def test_unknown_package_gives_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path))
    with pytest.raises(ResourceError,
                       match=r"cannot resolve 'package://no_such_pkg_xyz/a.urdf': .*"
                             r"'no_such_pkg_xyz' not found"):
        resolve_uri('package://no_such_pkg_xyz/a.urdf')
    with pytest.raises(ResourceError, match='expected package://<package>/<path>'):
        resolve_uri('package://ros_vi')
    with pytest.raises(FileNotFoundError):           # ResourceError is one
        shipped_model('no_such_model')


def test_file_uris_and_plain_paths():
    assert resolve_uri('file:///abs/robot.urdf') == '/abs/robot.urdf'
    assert resolve_uri('rel/robot.urdf') == 'rel/robot.urdf'
    assert resolve_uri('/abs/robot.xacro') == '/abs/robot.xacro'


XACRO = '''<?xml version="1.0"?>
<robot name="bot" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="mass" default="1.0"/>
  <xacro:arg name="child" default="bob"/>
  <link name="world"/>
  <link name="$(arg child)"><inertial><origin xyz="0 0 -1"/><mass value="$(arg mass)"/>
    <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
  <joint name="theta" type="continuous"><parent link="world"/><child link="$(arg child)"/>
    <axis xyz="1 0 0"/></joint>
</robot>
'''


def test_xacro_to_urdf_with_arguments(tmp_path):
    path = tmp_path / 'bot.urdf.xacro'
    path.write_text(XACRO)
    text = xacro_to_urdf(str(path), {'mass': 2.5, 'child': 'weight'})
    assert isinstance(text, str) and 'xacro:' not in text
    s = import_urdf(text)
    assert s.urdf.link_names == ['world', 'weight']
    s.q = 0.0
    assert abs(s.mass_matrix()[0, 0] - 2.5) < 1e-12
    assert 'value="1.0"' in xacro_to_urdf(path)          # defaults; a Path is fine
    assert load_urdf_text(str(path)) == xacro_to_urdf(str(path))


def test_load_urdf_text_and_xacro_errors(tmp_path):
    plain = tmp_path / 'r.urdf'
    plain.write_text('<robot name="r"><link name="a"/></robot>')
    assert load_urdf_text(str(plain)) == plain.read_text()
    with pytest.raises(URDFError, match="no such file '.*missing.urdf'"):
        load_urdf_text(str(tmp_path / 'missing.urdf'))
    with pytest.raises(URDFError, match='no such file'):
        xacro_to_urdf(str(tmp_path / 'missing.xacro'))
    bad = tmp_path / 'bad.xacro'
    bad.write_text('<robot name="b" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                   '<link name="${undefined_name}"/></robot>')
    with pytest.raises(URDFError, match='xacro'):
        xacro_to_urdf(str(bad))
    evil = tmp_path / 'evil.xacro'
    evil.write_text('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY e SYSTEM "file:///etc/'
                    'hostname">]><robot name="r"><link name="&e;"/></robot>')
    with pytest.raises(URDFSecurityError, match='ENTITY'):
        xacro_to_urdf(str(evil))
    with pytest.raises(URDFSecurityError):
        load_urdf_text(str(evil))


def test_in_tree_egg_info_of_a_development_checkout_is_found(tmp_path, monkeypatch, no_ament):
    """Run from the project directory, Python finds setuptools' in-tree ros_vi.egg-info
    before the venv's metadata; its folder is the project, so the models are found there."""
    project = tmp_path / 'project'
    (project / 'urdf').mkdir(parents=True)
    (project / 'package.xml').write_text('<package format="3"><name>ros_vi</name></package>\n')
    (project / 'urdf' / 'z.urdf').write_text('<robot name="z"><link name="a"/></robot>\n')
    egg = project / 'ros_vi.egg-info'
    egg.mkdir()
    (egg / 'PKG-INFO').write_text('Metadata-Version: 2.1\nName: ros_vi\nVersion: 0.1.0\n')
    monkeypatch.setattr(sys, 'prefix', str(tmp_path / 'empty'))
    monkeypatch.syspath_prepend(str(project))
    assert share_directory() == str(project)
    assert shipped_model('z') == os.path.join(str(project), 'urdf', 'z.urdf')


def test_package_installed_reads_the_ament_index(tmp_path, monkeypatch):
    """What the launch files ask before starting rviz2: an ament prefix whose index lists
    the package has it; without that marker it is absent."""
    prefix = tmp_path / 'prefix'
    index = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True)
    (prefix / 'share' / 'rviz2').mkdir()
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(prefix))
    assert not resources.package_installed('rviz2')
    (index / 'rviz2').write_text('')
    assert resources.package_installed('rviz2')
    assert not resources.package_installed('no_such_package_xyz')


def test_kernels_are_cached_in_the_users_cache_folder_not_beside_the_source(tmp_path):
    """The compiled kernels were cached beside the installed source (an install folder may
    be read-only, shared, or rebuilt): they go to $XDG_CACHE_HOME/ros_vi/numba, one folder
    per source folder, and nothing is written beside the source."""
    import glob
    import subprocess
    from ros_vi.mechanics import kernel
    here = os.path.join(os.path.dirname(kernel.__file__), '__pycache__')
    before = set(glob.glob(os.path.join(here, 'kernel.cross-*.nbi')))
    env = {k: v for k, v in os.environ.items() if k not in ('NUMBA_CACHE_DIR',
                                                              'ROS_VI_CACHE_DIR')}
    env['XDG_CACHE_HOME'] = str(tmp_path)
    env['PYTHONPATH'] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ('import ros_vi; from ros_vi.mechanics import kernel; kernel.cross(1., 0., 0., 0., '
            '1., 0.); from ros_vi.kernel_cache import cache_root, is_cached; '
            'print(cache_root()); print(is_cached(kernel))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         env=env, check=True, cwd=str(tmp_path)).stdout.split()
    assert out == [str(tmp_path / 'ros_vi' / 'numba'), 'True']
    assert glob.glob(str(tmp_path / 'ros_vi' / 'numba' / 'mechanics_*' / 'kernel.cross-*.nbi'))
    assert set(glob.glob(os.path.join(here, 'kernel.cross-*.nbi'))) == before
