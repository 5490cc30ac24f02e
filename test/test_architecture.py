"""The layering rules of docs/architecture.md, checked on the source itself.

* No package reaches into another package's private members: every ``obj._name`` (``obj``
  not ``self``/``cls``) must name something defined in the same package.
* The benchmarks and examples use ros_vi through its public names only.
* Only ``ros_vi/ros/`` imports rclpy.
* Nothing in the product points at files outside the repository.
"""
import ast
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, 'ros_vi')
SCRIPTS = [os.path.join(ROOT, 'benchmarks'), os.path.join(ROOT, 'examples')]


def _modules(top=SOURCE):
    for folder, _, files in os.walk(top):
        for name in sorted(files):
            if name.endswith('.py'):
                path = os.path.join(folder, name)
                with open(path, encoding='utf-8') as f:
                    yield os.path.relpath(path, ROOT), ast.parse(f.read(), path)


def package_of(path):
    """``ros_vi/mechanics/forces/damping.py`` -> ``ros_vi/mechanics``; a top-level module is
    its own package (``ros_vi/simulation.py`` -> ``ros_vi/simulation``)."""
    parts = path[:-3].split(os.sep)
    return '/'.join(parts[:2])


def _private(name):
    return name.startswith('_') and not name.startswith('__')


def private_definitions(modules):
    """{private name: set of files defining it} (functions, classes, assigned attributes
    and module-level names)."""
    defs = {}
    for path, tree in modules:
        for node in ast.walk(tree):
            names = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.append(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.append(node.attr)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names += [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            for name in names:
                if _private(name):
                    defs.setdefault(name, set()).add(path)
    return defs


def private_reaches(modules):
    """``[(file, line, name, defined in)]`` for every ``obj._name`` (obj not self/cls) and
    every ``from x import _name`` whose name is defined only in other packages (first
    list) or only in other modules of the same package (second list)."""
    defs = private_definitions(modules)
    across, within = [], []
    for path, tree in modules:
        for node in ast.walk(tree):
            name = None
            if isinstance(node, ast.Attribute) and _private(node.attr):
                if isinstance(node.value, ast.Name) and node.value.id in ('self', 'cls'):
                    continue
                name = node.attr
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if _private(alias.name):
                        within.append((path, node.lineno, alias.name, 'import'))
                continue
            if name is None or name not in defs or path in defs[name]:
                continue
            where = sorted(defs[name])
            if all(package_of(d) != package_of(path) for d in where):
                across.append((path, node.lineno, name, where))
            else:
                within.append((path, node.lineno, name, where))
    return across, within


def test_no_package_reaches_into_another_packages_private_members():
    across, _ = private_reaches(list(_modules()))
    assert across == [], '\n'.join('%s:%d .%s (defined in %s)' % r for r in across)


def test_the_scan_finds_a_reach_across_packages():
    """The checker itself: a synthetic reach from one package into another is reported."""
    owner = ('ros_vi/mechanics/x.py', ast.parse('class A:\n    def _hidden(self): pass\n'))
    user = ('ros_vi/control/y.py', ast.parse('def f(a):\n    return a._hidden()\n'))
    same = ('ros_vi/mechanics/z.py', ast.parse('def f(a):\n    return a._hidden()\n'))
    across, within = private_reaches([owner, user, same])
    assert [(p, n) for p, _, n, _ in across] == [('ros_vi/control/y.py', '_hidden')]
    assert [(p, n) for p, _, n, _ in within] == [('ros_vi/mechanics/z.py', '_hidden')]


def script_reaches(modules, scripts):
    """``[(file, line, what)]`` for every place a script (benchmark, example) reaches a
    private name of ros_vi: ``obj._name`` (obj not self/cls) naming something defined in
    ros_vi's ``modules`` and in none of the ``scripts``, ``from ros_vi... import _name``,
    and an import of a private ros_vi module (``ros_vi.x._y``)."""
    ours = private_definitions(modules)
    theirs = private_definitions(scripts)
    reaches = []
    for path, tree in scripts:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                if isinstance(node.value, ast.Name) and node.value.id in ('self', 'cls'):
                    continue
                if node.attr in ours and node.attr not in theirs:
                    reaches.append((path, node.lineno, '.' + node.attr))
                continue
            if isinstance(node, ast.ImportFrom):
                module, names = node.module or '', [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                module, names = '', [a.name for a in node.names]
            else:
                continue
            for name in names:
                full = (module + '.' + name).strip('.')
                if full.split('.')[0] != 'ros_vi':
                    continue
                if any(_private(part) for part in full.split('.')):
                    reaches.append((path, node.lineno, full))
    return reaches


def test_benchmarks_and_examples_use_only_public_names():
    scripts = [m for top in SCRIPTS for m in _modules(top)]
    assert scripts, 'no benchmarks or examples found'
    reaches = script_reaches(list(_modules()), scripts)
    assert reaches == [], '\n'.join('%s:%d %s' % r for r in reaches)


def test_the_scan_finds_a_script_reaching_a_private_name():
    """The checker itself: each kind of reach into ros_vi is reported, a script's own
    private names and self/cls are not."""
    owner = ('ros_vi/integrators/x.py',
             ast.parse('_H = 16\ndef _own(): pass\n'
                       'class A:\n    def __init__(self):\n        self._I = 1\n'))
    script = ('benchmarks/b.py', ast.parse(
        'from ros_vi.integrators.x import _H\n'
        'from ros_vi.mechanics import _derivcheck\n'
        'import ros_vi.mechanics._derivcheck\n'
        'from numpy import _globals\n'
        'def _own(): pass\n'
        'class B:\n'
        '    def f(self, a):\n'
        '        return a._I, self._I, a._own\n'))
    found = [(line, what) for _, line, what in script_reaches([owner], [script])]
    assert found == [(1, 'ros_vi.integrators.x._H'), (2, 'ros_vi.mechanics._derivcheck'),
                     (3, 'ros_vi.mechanics._derivcheck'), (8, '._I')]


def test_only_the_ros_package_imports_rclpy():
    offenders = []
    for path, tree in _modules():
        if path.startswith(os.path.join('ros_vi', 'ros') + os.sep):
            continue
        for node in ast.walk(tree):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                    else [node.module or ''] if isinstance(node, ast.ImportFrom) else [])
            offenders += [(path, m) for m in mods if m.split('.')[0] == 'rclpy']
    assert offenders == []


def test_product_does_not_refer_to_files_outside_the_repository():
    skip_dirs = {'.git', '.venv', 'build', 'install', 'log', '__pycache__', '.pytest_cache'}
    pattern = re.compile(r'\.\./shared|shared/(ARCHITECTURE|ROS_ENV|VI_FAST_PATH)')
    hits = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in skip_dirs and not d.endswith('.egg-info')]
        rel = os.path.relpath(folder, ROOT)
        if rel == '.ci':
            continue
        for name in files:
            path = os.path.join(folder, name)
            if os.path.samefile(path, __file__):
                continue
            try:
                with open(path, encoding='utf-8') as f:
                    for n, line in enumerate(f, 1):
                        if pattern.search(line):
                            hits.append('%s:%d' % (os.path.relpath(path, ROOT), n))
            except (UnicodeDecodeError, OSError):
                continue
    assert hits == []


# ---------------------------------------------------------------------- import cycles
def module_name(path):
    """``ros_vi/mechanics/frame.py`` -> ``ros_vi.mechanics.frame``; a package's
    ``__init__.py`` is the package."""
    parts = path[:-3].split(os.sep)
    if parts[-1] == '__init__':
        parts = parts[:-1]
    return '.'.join(parts)


def import_graph(modules):
    """{module: set of ros_vi modules it imports}, every import in the file (a function-level
    one too: a lazy import is still a dependency).  ``from pkg import name`` is an import of
    the submodule ``pkg.name`` where that exists, of ``pkg`` otherwise."""
    names = {module_name(path): path for path, _ in modules}
    graph = {}
    for path, tree in modules:
        me = module_name(path)
        base = me.split('.') if path.endswith('__init__.py') else me.split('.')[:-1]
        out = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mod = ('.'.join(base[:len(base) - node.level + 1] +
                                ([node.module] if node.module else []))
                       if node.level else node.module or '')
                targets = [mod + '.' + a.name if mod + '.' + a.name in names else mod
                           for a in node.names]
            else:
                continue
            for target in targets:
                if target.split('.')[0] != 'ros_vi':
                    continue
                while target not in names and '.' in target:
                    target = target.rsplit('.', 1)[0]
                if target in names and target != me:
                    out.add(target)
        graph[me] = out
    return graph


def cycles(graph):
    """The strongly connected components of more than one node (sorted lists)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):          # Tarjan's algorithm; the graphs here are a few hundred nodes
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def package_graph(graph):
    """The import graph between the packages of :func:`package_of` (``ros_vi.x``)."""
    out = {}
    for module, targets in graph.items():
        a = '.'.join(module.split('.')[:2])
        for target in targets:
            b = '.'.join(target.split('.')[:2])
            if a != b:
                out.setdefault(a, set()).add(b)
    return out


def test_no_import_cycle_between_files():
    found = cycles(import_graph(list(_modules())))
    assert found == [], '\n'.join(' <-> '.join(c) for c in found)


def test_no_import_cycle_between_packages():
    found = cycles(package_graph(import_graph(list(_modules()))))
    assert found == [], '\n'.join(' <-> '.join(c) for c in found)


def test_the_cycle_scan_finds_lazy_and_package_cycles():
    """The checker itself, on synthetic files: a function-level import closes a file cycle;
    two files of two packages importing each other's package make a package cycle."""
    files = [
        ('ros_vi/a/x.py', ast.parse('from . import y\n')),
        ('ros_vi/a/y.py', ast.parse('def f():\n    from .x import g\n')),
        ('ros_vi/a/z.py', ast.parse('from ..b import w\n')),
        ('ros_vi/b/w.py', ast.parse('import ros_vi.a.x\n')),
        ('ros_vi/b/v.py', ast.parse('from ros_vi import resources\n')),
        ('ros_vi/resources.py', ast.parse('import os\n'))]
    graph = import_graph(files)
    assert cycles(graph) == [['ros_vi.a.x', 'ros_vi.a.y']]
    assert cycles(package_graph(graph)) == [['ros_vi.a', 'ros_vi.b']]


# ---------------------------------------------------------------------- no global caches
_CONTAINERS = {'dict', 'list', 'set', 'defaultdict', 'OrderedDict', 'deque', 'Counter'}
_WEAK = {'WeakKeyDictionary', 'WeakValueDictionary', 'WeakSet'}
_MUTATORS = {'append', 'add', 'update', 'setdefault', 'pop', 'popitem', 'clear', 'extend',
             'insert', 'remove', 'discard', 'appendleft', '__setitem__'}
_CACHING_DECORATORS = {'lru_cache', 'cache', 'cached_property'}


def _called_name(node):
    """'f' for ``f(...)`` or ``mod.f(...)``, else None."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id
        if isinstance(func, ast.Attribute):
            return func.attr
    return None


def module_level_caches(paths):
    """``[(path, line, name, why)]``: module-level mutable state that a module keeps between
    calls, in the Python files ``paths``:

    * a module-level name bound to a weak dictionary or set (only ever used as a cache);
    * a module-level name bound to a container (dict, list, set literal, comprehension or
      constructor) that the module writes into (item assignment or deletion, a mutating
      method, augmented assignment) or rebinds from a function (``global``);
    * a module-level function memoised by ``functools.lru_cache`` / ``cache``.

    Constant tables (a dict or tuple that nothing writes into) are not state and are not
    reported."""
    found = []
    for path in paths:
        with open(path, encoding='utf-8') as f:
            tree = ast.parse(f.read(), path)
        containers = {}
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = node.value
                kind = None
                if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp,
                                      ast.SetComp)):
                    kind = 'container'
                elif _called_name(value) in _WEAK:
                    kind = 'weak'
                elif _called_name(value) in _CONTAINERS:
                    kind = 'container'
                for t in targets:
                    if isinstance(t, ast.Name) and kind == 'weak':
                        found.append((path, node.lineno, t.id, 'weak-reference cache'))
                    elif isinstance(t, ast.Name) and kind == 'container':
                        containers[t.id] = node.lineno
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for dec in node.decorator_list:
                    name = dec.attr if isinstance(dec, ast.Attribute) else (
                        dec.id if isinstance(dec, ast.Name) else _called_name(dec))
                    if name in _CACHING_DECORATORS:
                        found.append((path, node.lineno, node.name, 'memoised function'))
        written = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Subscript,)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                if isinstance(node.value, ast.Name):
                    written.add(node.value.id)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                written.add(node.target.id)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in _MUTATORS and isinstance(node.func.value, ast.Name)):
                written.add(node.func.value.id)
            elif isinstance(node, ast.Global):
                written.update(node.names)
        for name, line in containers.items():
            if name in written:
                found.append((path, line, name, 'module-level container written at run time'))
    return found


def python_files(folder):
    for where, _, files in os.walk(folder):
        for name in sorted(files):
            if name.endswith('.py'):
                yield os.path.join(where, name)


# caches of file contents, not of state (functools.lru_cache is thread-safe): read-only
# mesh arrays keyed by the file's path, modification time and size; the digest of the
# core's sources a process has loaded (the stamp of its compiled kernels)
FILE_CACHES = {(os.path.join('ros_vi', 'urdf', 'shapes.py'), '_load_mesh'),
               (os.path.join('ros_vi', 'kernel_cache.py'), 'kernel_sources_stamp')}


def test_no_module_level_mutable_cache_in_the_core():
    """Scratch and caches live in Data (or an object's own attributes), never in a module:
    a module-level cache is shared by every thread and every System of the process."""
    core = [path for path in python_files(SOURCE)
            if os.sep + 'ros' + os.sep not in os.path.relpath(path, ROOT)]
    found = [f for f in module_level_caches(core) if (os.path.relpath(f[0], ROOT), f[2])
             not in FILE_CACHES]
    assert not found, '\n'.join('%s:%d %s (%s)' % f for f in found)


def test_the_cache_scan_finds_what_it_looks_for(tmp_path):
    module = tmp_path / 'planted.py'
    module.write_text(
        'import functools\nimport weakref\n'
        '_BY_SYSTEM = weakref.WeakKeyDictionary()\n'
        '_MEMO = {}\n'
        '_SEEN = set()\n'
        '_COUNT = 0\n'
        'TABLE = {"x": 0, "y": 1}\n'
        '__all__ = ["f"]\n'
        'def f(key):\n'
        '    global _COUNT\n'
        '    _COUNT += 1\n'
        '    _SEEN.add(key)\n'
        '    _MEMO[key] = TABLE[key]\n'
        '@functools.lru_cache(maxsize=None)\n'
        'def g(n):\n'
        '    return n\n')
    found = {name: why for _, _, name, why in module_level_caches([str(module)])}
    assert set(found) == {'_BY_SYSTEM', '_MEMO', '_SEEN', 'g'}, found
