"""The xacro sandbox: while xacro runs, files are read only under the model's directory
tree, the ROS packages (ament index, ROS_PACKAGE_PATH) and the caller's allowed paths;
everything else is refused with URDFSecurityError naming the path, and no text comes back.
Every xacro here is small and written by the test."""
import os
import re

import pytest

from ros_vi.urdf import (URDFError, URDFSecurityError, import_urdf_file, load_urdf_text,
                         xacro_to_urdf)

NS = 'xmlns:xacro="http://www.ros.org/wiki/xacro"'
LINK = ('<link name="%s"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" '
        'iyz="0" izz="1"/></inertial></link>')

#: xacro properties reaching the builtins through Python's object graph (no name of the
#: expression starts with "__", so xacro's own check lets them through)
GRAPH = '''
  <xacro:property name="S" value="${python.vars(python.type)['__subclasses__'](python.int.mro()[-1])}"/>
  <xacro:property name="W" value="${[c for c in S if python.str(c) == &quot;&lt;class 'os._wrap_close'&gt;&quot;][0]}"/>
  <xacro:property name="I" value="${python.vars(W)['__init__']}"/>
  <xacro:property name="D" value="${python.vars(python.type(I))['__globals__']}"/>
  <xacro:property name="G" value="${python.vars(python.type(D))['__get__'](D, I)}"/>
'''


def robot(body, name='bot'):
    return '<?xml version="1.0"?>\n<robot name="%s" %s>\n%s\n</robot>\n' % (name, NS, body)


def part(link):
    return '<robot %s>%s</robot>\n' % (NS, LINK % link)


def write(path, text):
    path = str(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as fh:
        fh.write(text)
    return path


def refused(path_pattern):
    return pytest.raises(URDFSecurityError, match=r"refused access to %s" % path_pattern)


@pytest.fixture
def model(tmp_path):
    """``tmp_path/model`` (the model's tree) and ``tmp_path/outside/secret.*`` next to it."""
    write(tmp_path / 'outside' / 'secret.xacro', part('SECRET_LINK'))
    write(tmp_path / 'outside' / 'secret.yaml', 'secret: SECRET_VALUE\n')
    (tmp_path / 'model').mkdir()
    return tmp_path / 'model'


def _ament_prefix(root, pkg, monkeypatch, share_target=None):
    """``root`` as an ament prefix holding package ``pkg`` (its share directory a symlink to
    ``share_target`` if given); put on AMENT_PREFIX_PATH."""
    index = root / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True)
    (index / pkg).write_text('')
    share = root / 'share' / pkg
    if share_target is not None:
        os.symlink(str(share_target), str(share))
    else:
        share.mkdir()
        (share / 'package.xml').write_text('<package format="3"><name>%s</name></package>'
                                           % pkg)
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(root))
    return share


# ------------------------------------------------------------------------- refused
def test_include_of_etc_passwd_is_refused(model):
    path = write(model / 'r.xacro', robot('<xacro:include filename="/etc/passwd"/>'
                                          + LINK % 'a'))
    with refused("'/etc/passwd'"):
        xacro_to_urdf(path)
    with refused("'/etc/passwd'"):
        load_urdf_text(path)
    with refused("'/etc/passwd'"):
        import_urdf_file(path)


def test_optional_include_outside_is_refused_too(model):
    """xacro swallows the error of an optional include; the sandbox still refuses."""
    path = write(model / 'r.xacro', robot('<xacro:include filename="/etc/passwd" '
                                          'optional="true"/>' + LINK % 'a'))
    with refused("'/etc/passwd'"):
        xacro_to_urdf(path)


def test_load_yaml_of_etc_hostname_is_refused(model):
    path = write(model / 'r.xacro', robot(
        '<xacro:property name="y" value="${xacro.load_yaml(\'/etc/hostname\')}"/>'
        '<link name="${y}"/>'))
    with refused("'/etc/hostname'"):
        xacro_to_urdf(path)


def test_dotdot_escape_is_refused(model):
    path = write(model / 'sub' / 'r.xacro', robot(
        '<xacro:include filename="../../outside/secret.xacro"/>' + LINK % 'a'))
    with pytest.raises(URDFSecurityError) as info:
        xacro_to_urdf(path)
    msg = str(info.value)
    assert re.search(r"refused access to '[^']*/model/sub/\.\./\.\./outside/secret\.xacro' "
                     r"\(resolves to '[^']*/outside/secret\.xacro'\)", msg), msg
    assert 'SECRET_LINK' not in msg
    yml = write(model / 'y.xacro', robot(
        '<xacro:property name="y" value="${xacro.load_yaml(\'../outside/secret.yaml\')}"/>'
        '<link name="${y[\'secret\']}"/>'))
    with refused(r"'[^']*/model/\.\./outside/secret\.yaml'"):
        xacro_to_urdf(yml)


def test_symlinks_out_of_the_tree_are_refused(model, tmp_path):
    os.symlink(str(tmp_path / 'outside' / 'secret.yaml'), str(model / 'link.yaml'))
    os.symlink(str(tmp_path / 'outside'), str(model / 'linkdir'))
    path = write(model / 'r.xacro', robot(
        '<xacro:property name="y" value="${xacro.load_yaml(\'link.yaml\')}"/>'
        '<link name="${y[\'secret\']}"/>'))
    with pytest.raises(URDFSecurityError,
                       match=r"refused access to '[^']*/model/link\.yaml' \(resolves to "
                             r"'[^']*/outside/secret\.yaml'\)") as info:
        xacro_to_urdf(path)
    assert 'SECRET_VALUE' not in str(info.value)
    path = write(model / 'd.xacro', robot('<xacro:include filename="linkdir/secret.xacro"/>'))
    with refused(r"'[^']*/model/linkdir/secret\.xacro' \(resolves to "
                 r"'[^']*/outside/secret\.xacro'\)"):
        xacro_to_urdf(path)


def test_find_of_a_package_outside_the_allowed_roots_is_refused(model, tmp_path,
                                                                 monkeypatch):
    # a registered package whose share directory is a symlink out of the prefix
    _ament_prefix(tmp_path / 'prefix', 'elsewhere_pkg', monkeypatch,
                  share_target=tmp_path / 'outside')
    path = write(model / 'r.xacro', robot(
        '<xacro:include filename="$(find elsewhere_pkg)/secret.xacro"/>'))
    with refused(r"'[^']*/prefix/share/elsewhere_pkg/secret\.xacro' \(resolves to "
                 r"'[^']*/outside/secret\.xacro'\)"):
        xacro_to_urdf(path)
    # and ".." out of a package that is allowed
    (tmp_path / 'prefix').rename(tmp_path / 'old_prefix')
    _ament_prefix(tmp_path / 'prefix', 'fake_pkg', monkeypatch)
    path = write(model / 'f.xacro', robot(
        '<xacro:include filename="$(find fake_pkg)/../../../outside/secret.xacro"/>'))
    with refused(r"'[^']*/prefix/share/fake_pkg/\.\./\.\./\.\./outside/secret\.xacro'"):
        xacro_to_urdf(path)


def test_object_graph_cannot_open_files(model, tmp_path):
    """``python.vars(python.type)['__subclasses__']`` reaches the real ``open``; the sandbox
    gates the open itself, not only xacro's include and load_yaml."""
    path = write(model / 'r.xacro', robot(
        GRAPH + '<link name="${G[\'__builtins__\'][\'open\'](\'/etc/hostname\').read()}"/>'))
    with refused("'/etc/hostname'"):
        xacro_to_urdf(path)
    secret = str(tmp_path / 'outside' / 'secret.yaml')
    path = write(model / 's.xacro', robot(
        GRAPH + '<link name="${G[\'open\'](\'%s\', 0)}"/>' % secret))      # os.open
    with refused("'%s'" % re.escape(secret)):
        xacro_to_urdf(path)


def test_object_graph_cannot_write_or_run_commands(model):
    target = str(model / 'written.txt')
    path = write(model / 'w.xacro', robot(
        GRAPH + '<link name="${G[\'__builtins__\'][\'open\'](\'%s\', \'w\').write(\'x\')}"/>'
        % target))
    with pytest.raises(URDFSecurityError, match=r"'%s': writing" % re.escape(target)):
        xacro_to_urdf(path)
    assert not os.path.exists(target)
    marker = str(model / 'pwned')
    path = write(model / 'c.xacro', robot(
        GRAPH + '<link name="${G[\'system\'](\'touch %s\')}"/>' % marker))
    with pytest.raises(URDFSecurityError, match=r'refused operation os\.system'):
        xacro_to_urdf(path)
    assert not os.path.exists(marker)


def test_glob_include_outside_is_refused(model):
    path = write(model / 'r.xacro', robot('<xacro:include filename="/etc/host*"/>'
                                          + LINK % 'a'))
    with refused("'/etc'"):
        xacro_to_urdf(path)


def test_a_missing_allowed_path_is_an_error(model):
    path = write(model / 'r.xacro', robot(LINK % 'a'))
    with pytest.raises(URDFError, match=r"allowed path '/no/such/dir': no such file"):
        xacro_to_urdf(path, allowed_paths=['/no/such/dir'])


# ------------------------------------------------------------------------- allowed
def test_includes_and_yaml_inside_the_tree_work(model):
    write(model / 'parts' / 'arm.xacro', part('arm'))
    write(model / 'parts' / 'params.yaml', 'mass: 2.5\n')
    write(model / 'parts' / 'hand.xacro', part('hand'))
    path = write(model / 'r.xacro', robot(
        '<xacro:include filename="parts/arm.xacro"/>'
        '<xacro:include filename="./parts/../parts/hand.xacro"/>'
        '<xacro:property name="p" value="${xacro.load_yaml(\'parts/params.yaml\')}"/>'
        '<link name="base"><inertial><mass value="${p[\'mass\']}"/><inertia ixx="1" ixy="0" '
        'ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/>'
        '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        '<joint name="h" type="fixed"><parent link="arm"/><child link="hand"/></joint>'))
    text = xacro_to_urdf(path)
    assert '<link name="arm">' in text and '<mass value="2.5"/>' in text
    system = import_urdf_file(path)
    assert system.urdf.joint_names == ['j']


def test_a_symlinked_model_file_may_read_its_real_directory(model, tmp_path):
    real = tmp_path / 'real'
    write(real / 'arm.xacro', part('arm'))
    write(real / 'r.xacro', robot('<xacro:include filename="%s"/>' % (real / 'arm.xacro')))
    os.symlink(str(real / 'r.xacro'), str(model / 'r.xacro'))
    assert '<link name="arm">' in xacro_to_urdf(str(model / 'r.xacro'))


def test_includes_from_an_ament_package_work(model, tmp_path, monkeypatch):
    share = _ament_prefix(tmp_path / 'prefix', 'fake_pkg', monkeypatch)
    write(share / 'urdf' / 'arm.xacro', part('pkg_arm'))
    write(share / 'config' / 'p.yaml', 'name: from_yaml\n')
    path = write(model / 'r.xacro', robot(
        '<xacro:include filename="$(find fake_pkg)/urdf/arm.xacro"/>'
        '<xacro:property name="p" value="${xacro.load_yaml(\'$(find fake_pkg)/config/p.yaml\')}"/>'
        '<link name="${p[\'name\']}"/>'))
    text = xacro_to_urdf(path)
    assert '<link name="pkg_arm">' in text and '<link name="from_yaml"/>' in text


def test_colcon_symlink_install_packages_work(model, tmp_path, monkeypatch):
    """colcon build --symlink-install: share/<pkg>/* are symlinks into the source package."""
    src = tmp_path / 'src' / 'fake_pkg'
    write(src / 'package.xml', '<package format="3"><name>fake_pkg</name></package>')
    write(src / 'urdf' / 'arm.xacro', part('src_arm'))
    root = tmp_path / 'install'
    index = root / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True)
    (index / 'fake_pkg').write_text('')
    (root / 'share' / 'fake_pkg' / 'urdf').mkdir(parents=True)
    os.symlink(str(src / 'package.xml'), str(root / 'share' / 'fake_pkg' / 'package.xml'))
    os.symlink(str(src / 'urdf' / 'arm.xacro'),
               str(root / 'share' / 'fake_pkg' / 'urdf' / 'arm.xacro'))
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(root))
    path = write(model / 'r.xacro', robot(
        '<xacro:include filename="$(find fake_pkg)/urdf/arm.xacro"/>'))
    assert '<link name="src_arm">' in xacro_to_urdf(path)


def test_includes_from_a_ros_package_path_package_work(model, tmp_path, monkeypatch):
    pkg = tmp_path / 'ros1_ws' / 'src' / 'old_pkg'
    write(pkg / 'package.xml', '<package format="2"><name>old_pkg</name></package>')
    arm = write(pkg / 'urdf' / 'arm.xacro', part('rpp_arm'))
    write(tmp_path / 'ros1_ws' / 'src' / 'not_a_package' / 'x.xacro', part('no'))
    monkeypatch.setenv('ROS_PACKAGE_PATH', str(tmp_path / 'ros1_ws' / 'src'))
    path = write(model / 'r.xacro', robot('<xacro:include filename="%s"/>' % arm))
    assert '<link name="rpp_arm">' in xacro_to_urdf(path)
    # a directory on ROS_PACKAGE_PATH is not a package unless it holds a package.xml
    path = write(model / 'n.xacro', robot('<xacro:include filename="%s"/>' % (
        tmp_path / 'ros1_ws' / 'src' / 'not_a_package' / 'x.xacro')))
    with refused(r"'[^']*/not_a_package/x\.xacro'"):
        xacro_to_urdf(path)


def test_allowed_paths_extend_the_sandbox(model, tmp_path):
    path = write(model / 'r.xacro', robot(
        '<xacro:include filename="%s"/>' % (tmp_path / 'outside' / 'secret.xacro')))
    with refused(r"'[^']*/outside/secret\.xacro'"):
        xacro_to_urdf(path)
    outside = str(tmp_path / 'outside')
    assert '<link name="SECRET_LINK">' in xacro_to_urdf(path, allowed_paths=[outside])
    assert '<link name="SECRET_LINK">' in load_urdf_text(path, allowed_paths=(outside,))
    write(model / 'j.xacro', robot(
        '<xacro:include filename="%s"/>' % (tmp_path / 'outside' / 'secret.xacro') + LINK % 'b'
        + '<joint name="j" type="continuous"><parent link="SECRET_LINK"/><child link="b"/>'
        '</joint>'))
    system = import_urdf_file(str(model / 'j.xacro'), allowed_paths=[outside])
    assert system.urdf.joint_names == ['j']


def test_xacro_arguments_and_lazy_imports_still_work(model):
    """``$(arg)``, ``$(eval)`` and math run inside the sandbox (yaml, substitution_args and
    minidom's builder are imported by xacro lazily)."""
    path = write(model / 'r.xacro', robot(
        '<xacro:arg name="n" default="a"/>'
        '<link name="$(arg n)_$(eval 1 + 2)_${int(math.floor(math.pi))}"/>'))
    assert '<link name="b_3_3"/>' in xacro_to_urdf(path, {'n': 'b'})


def test_xacro_is_stopped_at_its_memory_limit_and_says_so(model, tmp_path, capsys):
    """``${'a' * (3 * 10**9)}`` took 34 s and 5.9 GB; the child's address space is limited
    (MEMORY_LIMIT), so it fails at once and the error names the limit."""
    from ros_vi.cli import main
    from ros_vi.urdf.xacro import MEMORY_LIMIT
    path = write(model / 'big.urdf.xacro', robot(
        '<xacro:property name="big" value="${\'a\' * (3 * 10**9)}"/>' + LINK % '${big[:1]}'))
    with pytest.raises(URDFError, match=r"xacro '.*big\.urdf\.xacro': exceeded the memory "
                                        r"limit of %d MiB" % (MEMORY_LIMIT >> 20)):
        xacro_to_urdf(path)
    assert main(['info', path]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'memory limit' in err
    # a xacro that stays within the limit is untouched by it
    assert 'name="a"' in xacro_to_urdf(write(model / 'small.urdf.xacro', robot(
        '<xacro:property name="big" value="${\'a\' * (10**6)}"/>' + LINK % '${big[:1]}')))


def test_the_text_xacro_produces_is_bounded_like_any_description(model, monkeypatch):
    from ros_vi.urdf import xacro as xacro_module
    monkeypatch.setattr(xacro_module, 'MAX_DESCRIPTION_BYTES', 1000)
    path = write(model / 'long.urdf.xacro', robot(''.join(LINK % ('l%d' % i)
                                                          for i in range(20))))
    with pytest.raises(URDFError, match=r'produced [\d,]+ characters of URDF, more than '):
        xacro_to_urdf(path)
