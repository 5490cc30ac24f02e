"""ros_vi.kernel_cache: a cached kernel is judged fresh by the contents of the sources it is
compiled from, not by its own file's time (a kernel compiled with a changed callee ran the
old machine code)."""
import os
import subprocess
import sys
import textwrap

from ros_vi import kernel_cache

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CALLER = '''
from numba import njit
from .callee import scale

@njit(cache=True)
def twice_scaled(x):
    return 2.0 * scale(x)
'''

CALLEE = '''
from numba import njit

@njit(cache=True)
def scale(x):
    return %s * x
'''

RUN = '''
import sys
sys.path.insert(0, {parent!r})
from numba.core import caching
from ros_vi import kernel_cache
kernel_cache.register(kernel_cache.locator_for({package!r}))
from kpkg import caller
print(caller.twice_scaled(1.0))
print(sum(caller.twice_scaled.stats.cache_hits.values()))
'''


def _run(tmp_path, env):
    code = RUN.format(parent=str(tmp_path), package=str(tmp_path / 'kpkg'))
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         env=env, check=True, cwd=str(tmp_path)).stdout.split('\n')
    return float(out[0]), int(out[1])


def test_a_changed_callee_recompiles_its_caller_whatever_the_file_times(tmp_path):
    """numba's own stamp (the caller's file time and size) kept the caller's machine code,
    with the old callee inlined, when only the callee changed (as a copy that keeps file
    times delivers it): the package's contents stamp every kernel."""
    package = tmp_path / 'kpkg'
    package.mkdir()
    (package / '__init__.py').write_text('')
    (package / 'caller.py').write_text(textwrap.dedent(CALLER))
    (package / 'callee.py').write_text(textwrap.dedent(CALLEE % '3.0'))
    env = {k: v for k, v in os.environ.items() if k not in ('NUMBA_CACHE_DIR',
                                                              'ROS_VI_CACHE_DIR')}
    env['XDG_CACHE_HOME'] = str(tmp_path / 'cache')
    env['PYTHONPATH'] = REPO
    assert _run(tmp_path, env) == (6.0, 0)              # compiled, nothing cached yet
    assert _run(tmp_path, env) == (6.0, 1)  # loaded from the cache
    times = {name: os.stat(package / name) for name in ('caller.py', 'callee.py')}
    # same size, same times: only the contents say the callee changed
    (package / 'callee.py').write_text(textwrap.dedent(CALLEE % '5.0'))
    for name, st in times.items():
        os.utime(package / name, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _run(tmp_path, env) == (10.0, 0)
    assert _run(tmp_path, env) == (10.0, 1)
    assert os.listdir(tmp_path / 'cache' / 'ros_vi' / 'numba')


def test_the_stamp_follows_the_core_and_leaves_out_the_ros_adapter(tmp_path):
    package = tmp_path / 'pkg'
    (package / 'ros').mkdir(parents=True)
    (package / 'core.py').write_text('A = 1\n')
    (package / 'ros' / 'node.py').write_text('B = 1\n')

    def stamp():
        kernel_cache.kernel_sources_stamp.cache_clear()
        return kernel_cache.kernel_sources_stamp(str(package))

    first = stamp()
    (package / 'ros' / 'node.py').write_text('B = 2\n')
    assert stamp() == first
    (package / 'core.py').write_text('A = 2\n')
    assert stamp() != first
    kernel_cache.kernel_sources_stamp.cache_clear()


def test_a_cache_from_other_sources_is_not_warm(tmp_path):
    """``is_cached`` (which decides whether a node compiles before it joins the graph) says
    no to index files stamped by other sources."""
    code = ('import ros_vi; from ros_vi.mechanics import kernel; kernel.cross(1., 0., 0., 0., '
            '1., 0.); from ros_vi import kernel_cache; print(kernel_cache.is_cached(kernel)); '
            'kernel_cache.kernel_sources_stamp = lambda folder: "other sources"; '
            'print(kernel_cache.is_cached(kernel))')
    out = _run_with_own_cache(code, tmp_path)
    assert out == ['True', 'False']


def test_numba_cache_dir_wins(monkeypatch, tmp_path):
    monkeypatch.setenv('ROS_VI_CACHE_DIR', str(tmp_path / 'ours'))
    monkeypatch.setenv('NUMBA_CACHE_DIR', str(tmp_path / 'numba'))
    assert kernel_cache.cache_root() == str(tmp_path / 'numba')
    monkeypatch.delenv('NUMBA_CACHE_DIR')
    assert kernel_cache.cache_root() == str(tmp_path / 'ours')


def test_index_files_left_by_moved_kernels_do_not_make_the_cache_cold(tmp_path):
    """numba names an index by the kernel's qualified name and first line: an edit that
    moves a kernel leaves the old index behind, stale.  ``is_cached`` reads only the indexes
    of the module's present kernels, so such a leftover does not keep a node compiling;
    a bad index of a present kernel still does."""
    code = ('import glob, os, ros_vi; from ros_vi.mechanics import kernel; '
            'kernel.cross(1., 0., 0., 0., 1., 0.); from ros_vi import kernel_cache; '
            '(index,) = glob.glob(os.path.join(kernel_cache.cache_root(), "**", '
            '"kernel.cross-*.nbi"), recursive=True); '
            'open(index.replace("cross-%d." % kernel.cross.py_func.__code__.co_firstlineno, '
            '"cross-1."), "wb").write(b"left by an older kernel.py"); '
            'print(kernel_cache.is_cached(kernel)); '
            'open(index, "wb").write(b"broken"); print(kernel_cache.is_cached(kernel))')
    out = _run_with_own_cache(code, tmp_path)
    assert out == ['True', 'False']


def _run_with_own_cache(code, tmp_path):
    """Run ``code`` in a fresh interpreter whose kernel cache is under ``tmp_path``; returns
    its printed words."""
    env = {k: v for k, v in os.environ.items() if k not in ('NUMBA_CACHE_DIR',
                                                              'ROS_VI_CACHE_DIR')}
    env['XDG_CACHE_HOME'] = str(tmp_path)
    env['PYTHONPATH'] = REPO
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          env=env, check=True, cwd=str(tmp_path)).stdout.split()
