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
