"""Where ros_vi's compiled (numba) kernels are cached, and when a cached kernel is stale.

Where: numba caches a ``cache=True`` kernel next to its module (``__pycache__``) when it can
write there.  An installed package's folder is not the place: it may be read-only, shared by
users, or replaced by the next ``colcon build``.  ros_vi's kernels are cached under
:func:`cache_root` instead: ``$NUMBA_CACHE_DIR`` when set (as numba documents), else
``$ROS_VI_CACHE_DIR``, else ``$XDG_CACHE_HOME/ros_vi/numba``, else ``~/.cache/ros_vi/numba``,
one subfolder per source folder (so two installs do not mix).

When: numba judges a cached kernel fresh by its own file's modification time and size.  A
kernel compiled together with the kernels it calls (and the module constants it reads) from
other files stays "fresh" when only those files change, and the stale machine code runs:
a changed array layout then fails at run time, or worse.  ros_vi's kernels are stamped
instead with :func:`kernel_sources_stamp`: a digest of the contents of every module of the
core (all but the ROS adapter).  Any change to one of them recompiles, whatever the files'
times say (a copy that keeps modification times, a checkout that resets them).

Importing ros_vi registers the locator that does both (:func:`register`).  It answers only
for files inside the ros_vi package: numba caches every other kernel in the process as it
always does.
"""
import functools
import glob
import hashlib
import os
import pickle

from numba.core import caching

__all__ = ['cache_root', 'register', 'is_cached', 'kernel_sources_stamp', 'locator_for']

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def cache_root():
    """The folder ros_vi's kernels are cached in (see the module doc)."""
    for name in ('NUMBA_CACHE_DIR', 'ROS_VI_CACHE_DIR'):
        explicit = os.environ.get(name)
        if explicit:
            return explicit
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'ros_vi', 'numba')


@functools.lru_cache(maxsize=None)
def kernel_sources_stamp(package_dir):
    """A digest (hex string) of the contents of every Python module of the package in
    ``package_dir`` but its ROS adapter (``ros/``, which no kernel reaches: the core never
    imports it).  A kernel is compiled with the kernels it calls and the module constants it
    reads, from any module of the core, so the whole core stamps it.  Computed once per
    process (a few milliseconds)."""
    package_dir = os.path.abspath(package_dir)
    adapter = os.path.join(package_dir, 'ros') + os.sep
    digest = hashlib.sha256()
    for path in sorted(glob.glob(os.path.join(package_dir, '**', '*.py'), recursive=True)):
        if path.startswith(adapter):
            continue
        digest.update(os.path.relpath(path, package_dir).encode() + b'\0')
        with open(path, 'rb') as f:
            digest.update(hashlib.sha256(f.read()).digest())
    return digest.hexdigest()


def locator_for(package_dir):
    """numba's cache locator for the kernels of the package in ``package_dir``: cached under
    :func:`cache_root`, stamped with :func:`kernel_sources_stamp` (a class, as numba wants)."""
    package_dir = os.path.abspath(package_dir)

    class KernelCacheLocator(caching._CacheLocator):
        package = package_dir

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(cache_root(),
                                            self.get_suitable_cache_subpath(py_file))

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            return kernel_sources_stamp(self.package)

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            if not os.path.abspath(py_file).startswith(cls.package + os.sep):
                return None
            if not os.path.exists(py_file):
                return None
            self = cls(py_func, py_file)
            try:
                self.ensure_cache_path()
            except OSError:
                return None     # a folder that cannot be written: numba's other locators
            return self

    return KernelCacheLocator


PackageCacheLocator = locator_for(_PACKAGE)


def register(locator=PackageCacheLocator):
    """Put ``locator`` (ros_vi's by default) first among numba's cache locators (once): it
    answers only for its own package's files."""
    classes = caching.CacheImpl._locator_classes
    if locator not in classes:
        classes.insert(0, locator)


def is_cached(module):
    """True when the kernels of ``module`` (a ros_vi module object) are in the cache and
    fresh (compiled from the package's present kernel sources): a process that imports it
    starts warm."""
    path = os.path.abspath(module.__file__)
    stem = os.path.splitext(os.path.basename(path))[0]
    folder = os.path.join(cache_root(), caching._CacheLocator.get_suitable_cache_subpath(path))
    stamp = kernel_sources_stamp(_PACKAGE)
    # the index files of the module's present kernels: numba names them by qualified name
    # and first line, so an index left by an earlier version of the file (a kernel since
    # moved or removed) is not one of them
    indexes = []
    for obj in vars(module).values():
        func = getattr(obj, 'py_func', None)
        if func is None or func.__module__ != module.__name__:
            continue
        name = '%s.%s-%d.' % (stem, func.__qualname__, func.__code__.co_firstlineno)
        indexes += glob.glob(os.path.join(folder, glob.escape(name) + '*.nbi'))
    for index in indexes:
        try:
            with open(index, 'rb') as f:
                pickle.load(f)                      # numba's version
                cached_stamp, _ = pickle.loads(f.read())
        except Exception:   # noqa: BLE001 -- an unreadable index is simply not a warm cache
            return False
        if cached_stamp != stamp:
            return False
    return bool(indexes)
