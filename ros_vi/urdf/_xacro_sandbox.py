"""The xacro sandbox: runs xacro in a child process whose file access is gated.

This file is run as a script (``python -I -B _xacro_sandbox.py``) by
:func:`ros_vi.urdf.xacro.xacro_to_urdf`; it imports nothing of ros_vi (so the child starts in
a few tens of milliseconds).  The request comes as JSON on stdin: ``file`` (absolute path of
the model), ``args`` (xacro arguments), ``allowed`` (extra directories), ``sys_path`` (the
parent's import path), ``memory`` (bytes of address space the child may use, or None).
The answer is one JSON object on the original stdout: ``{"urdf": text}``, or
``{"refused": [[path, resolved, what], ...], "error": msg}``, or ``{"error": msg}`` (with
``"memory": true`` when xacro ran out of the memory it may use).

Memory
------
Once its modules are imported, the child limits its own address space
(``resource.setrlimit(RLIMIT_AS)``, ``memory`` bytes): an expression such as
``${'a' * (3 * 10**9)}`` then fails at once with a MemoryError (reported as such) instead of
taking the machine's memory.

How the gate works
------------------
After xacro and the modules it loads lazily are imported (outside the gate), one audit hook
(:func:`sys.addaudithook`, PEP 578) is installed for the rest of the child's life; there is
no way to turn it off, and its state lives only in the hook's closure.  Audit events are
raised by the interpreter itself for every file open (``open``: :func:`open`, :func:`os.open`,
:func:`io.open_code`, ...), directory listing, process, network and introspection call, however
the calling code got hold of the function -- also through Python's object graph from a xacro
expression (``python.vars(python.type)['__subclasses__']``, ``$(eval ...)``, which has the
full builtins).  The hook:

* allows reading (never writing) a file, or listing a directory, whose real path (symlinks
  and ``..`` resolved) lies in one of the allowed roots:

  - the model file's directory tree (the directory it is named in, and the directory it
    really is in when the model file itself is a symlink);
  - the directories the caller lists (``allowed_paths``);
  - a ROS package: ``<prefix>/share/<pkg>`` of a package registered in the ament index of a
    ``AMENT_PREFIX_PATH`` prefix (where ``$(find pkg)`` points), the ament resource index
    itself (``<prefix>/share/ament_index/resource_index``, read by ``$(find)``), and, for
    ``colcon build --symlink-install``, the directory its ``package.xml`` really is in; and
    any directory holding a ``package.xml`` under a ``ROS_PACKAGE_PATH`` entry;

* allows Python's import system to read modules: files ending in ``.py``/``.pyc`` under the
  ``sys.path`` entries the parent had (so a module xacro or yaml loads lazily still imports;
  the child runs with ``-B``, so no bytecode is written).  Python source of installed
  modules is not a secret, and only those suffixes are readable there;

* allows code execution inside the interpreter (``import``, ``compile``, ``exec``,
  ``marshal.loads``), which xacro needs to evaluate its expressions;

* refuses everything else: any other file open (and any write, any open of a file
  descriptor number), any other directory listing, and every other audited operation
  (processes: ``os.system``, ``subprocess.Popen``, ``os.exec``, ``os.posix_spawn``,
  ``os.fork``; network: ``socket.*``; ``ctypes``; ``gc`` and frame introspection; file
  system changes; environment changes; ...).  A refused operation raises
  :class:`PermissionError` where it happened and is recorded; if anything was refused, the
  run fails with a message naming the path (or the operation), whatever xacro did with the
  exception (an ``optional`` include swallows it), and no text is returned.

Running xacro in a child process, not in a thread of the caller, means that nothing a xacro
file does can persist: a xacro expression can reach and modify any object of the process
it runs in (module attributes, functions other code calls later), which no in-process gate
can prevent.  It also keeps xacro's module-level state (it is not thread-safe) out of the
caller.  File existence (``os.stat``) raises no audit event and is not gated.
"""
import sys


def make_gate(model, allowed, sys_path, environ):
    """``(hook, refused)``: the audit hook for a model file and the list it records refusals
    in (``[path, resolved, what]``).  Everything the hook calls is bound here (C functions
    and strings), so later changes to modules (``os.path.realpath = ...``) do not reach it."""
    import errno
    import posix
    import stat as _stat

    lstat = posix.lstat
    pstat = posix.stat
    readlink = posix.readlink
    fspath = posix.fspath
    getcwd = posix.getcwd
    S_ISLNK = _stat.S_ISLNK
    S_ISDIR = _stat.S_ISDIR
    sep = '/'
    cwd0 = getcwd()

    def normjoin(parts):
        out = []
        for p in parts:
            if p in ('', '.'):
                continue
            if p == '..':
                if out:
                    out.pop()
                continue
            out.append(p)
        return out

    def realpath(path):
        """Absolute path with every symlink and ``..`` resolved (like os.path.realpath,
        with the functions bound above; a missing tail stays as it is)."""
        if not path.startswith(sep):
            path = cwd0 + sep + path
        todo = [p for p in path.split(sep)][::-1]
        done = []
        hops = 0
        while todo:
            part = todo.pop()
            if part in ('', '.'):
                continue
            if part == '..':
                if done:
                    done.pop()
                continue
            candidate = sep + sep.join(done + [part])
            try:
                st = lstat(candidate)
            except OSError:
                done.append(part)
                continue
            if S_ISLNK(st.st_mode):
                hops += 1
                if hops > 64:
                    raise OSError(errno.ELOOP, 'too many symlinks', candidate)
                target = readlink(candidate)
                if target.startswith(sep):
                    done = []
                todo.extend(target.split(sep)[::-1])
            else:
                done.append(part)
        return sep + sep.join(done)

    def exists(path, dir_=False):
        try:
            st = pstat(path)
        except OSError:
            return False
        return S_ISDIR(st.st_mode) if dir_ else True

    def under(path, root):
        return path == root or path.startswith(root if root.endswith(sep) else root + sep)

    model_real = realpath(model)
    roots = [realpath(model.rsplit(sep, 1)[0] or sep),
             model_real.rsplit(sep, 1)[0] or sep]
    roots += [realpath(p) for p in allowed]
    roots = tuple(roots)
    shares = tuple(realpath(p) + '/share' for p in environ.get('AMENT_PREFIX_PATH', '').split(':')
                   if p)
    rpp = tuple(realpath(p) for p in environ.get('ROS_PACKAGE_PATH', '').split(':') if p)
    py_roots = tuple(realpath(p) for p in sys_path if p)
    index_rel = 'ament_index/resource_index/packages/'
    symlinked = []        # [package source roots] of colcon --symlink-install, computed lazily

    def package_root(real):
        for share in shares:
            if not under(real, share) or real == share:
                continue
            pkg = real[len(share) + 1:].split(sep, 1)[0]
            if pkg == 'ament_index':
                if under(real, share + '/ament_index/resource_index'):
                    return True
                continue
            if exists(share + sep + index_rel + pkg):
                return True
        for entry in rpp:
            if under(real, entry):
                d = real
                while under(d, entry):
                    if exists(d + '/package.xml'):
                        return True
                    if d == entry:
                        break
                    d = d.rsplit(sep, 1)[0] or sep
        if not symlinked:
            symlinked.append(())
            found = []
            for share in shares:
                try:
                    names = posix.listdir(share + sep + index_rel)
                except OSError:
                    continue
                for pkg in names:
                    xml = share + sep + pkg + '/package.xml'
                    try:
                        if S_ISLNK(lstat(xml).st_mode):
                            found.append(realpath(xml).rsplit(sep, 1)[0])
                    except OSError:
                        pass
            symlinked[0] = tuple(found)
        return any(under(real, r) for r in symlinked[0])

    def allowed_path(real, python_ok):
        if any(under(real, r) for r in roots):
            return True
        if python_ok and (real.endswith('.py') or real.endswith('.pyc')) and \
                any(under(real, r) for r in py_roots):
            return True
        return package_root(real)

    refused = []
    free = frozenset(('import', 'compile', 'exec', 'marshal.loads', 'builtins.id',
                      'cpython._PySys_ClearAuditHooks'))
    writing = posix.O_WRONLY | posix.O_RDWR | posix.O_CREAT | posix.O_APPEND | posix.O_TRUNC
    inside = [False]      # re-entrance guard (the checks raise no audit events, but be safe)

    def refuse(path, real, what):
        refused.append([path, real, what])
        if path is None:
            raise PermissionError(errno.EPERM, 'refused by the xacro sandbox: %s' % what)
        raise PermissionError(errno.EACCES, 'refused by the xacro sandbox (%s)' % what, path)

    def hook(event, args):
        if event in free or inside[0]:
            return
        inside[0] = True
        try:
            if event == 'open':
                path, mode, flags = args
                if path is None:        # os.open etc. report no path for some calls
                    refuse(None, None, 'open of an unnamed file')
                if isinstance(path, int):
                    refuse(None, None, 'open of file descriptor %d' % path)
                path = fspath(path)
                if isinstance(path, bytes):
                    path = path.decode('utf-8', 'surrogateescape')
                if (mode is not None and any(c in mode for c in 'wax+')) or \
                        (flags or 0) & writing:
                    refuse(path, realpath(path), 'writing')
                real = realpath(path)
                if not allowed_path(real, True):
                    refuse(path, real, 'outside the allowed directories')
            elif event in ('os.listdir', 'os.scandir', 'glob.glob', 'glob.glob/2'):
                path = args[0] if args else None
                if path is None or path == '' or path == b'':
                    path = '.'
                if isinstance(path, int):
                    refuse(None, None, 'listing of file descriptor %d' % path)
                path = fspath(path)
                if isinstance(path, bytes):
                    path = path.decode('utf-8', 'surrogateescape')
                if event.startswith('glob'):
                    # glob lists the directories of the pattern's literal prefix; os.scandir
                    # (audited) gates each directory it actually lists
                    return
                real = realpath(path)
                if not (allowed_path(real, False) or
                        any(under(real, r) for r in py_roots)):
                    refuse(path, real, 'listing outside the allowed directories')
            else:
                refuse(None, None, 'operation %s%r' % (event, tuple(
                    a if isinstance(a, (str, int, float, bytes)) else type(a).__name__
                    for a in args)[:3]))
        finally:
            inside[0] = False

    return hook, refused


def _out_of_memory(err):
    """Whether ``err`` is, or was raised while handling, a MemoryError (xacro wraps the
    errors of an expression in its own exception, ``exc`` holding the original)."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, MemoryError):
            return True
        seen.add(id(err))
        err = getattr(err, 'exc', None) or err.__cause__ or err.__context__
    return False


def main():
    import io
    import json
    import os
    request = json.loads(sys.stdin.read())
    sys.path[:] = list(request['sys_path'])
    out = os.fdopen(os.dup(1), 'w')
    os.dup2(2, 1)                       # xacro's prints go to stderr, the answer to `out`
    sys.stdout = sys.stderr
    try:
        import xacro
        import xacro.substitution_args  # noqa: F401  (loaded lazily by xacro otherwise)
        import xml.dom.expatbuilder     # noqa: F401
        import yaml                     # noqa: F401
        try:
            import ament_index_python.packages  # noqa: F401
        except ImportError:
            pass
    except ImportError as err:
        out.write(json.dumps({'error': '.xacro files need xacro (pip install xacro): %s'
                                       % err}))
        return 0
    hook, refused = make_gate(request['file'], request['allowed'], request['sys_path'],
                              dict(os.environ))
    limit = request.get('memory')
    if limit:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))
    err_buf = io.StringIO()
    sys.stderr = err_buf
    sys.addaudithook(hook)
    # ------------------------------------------------------------ the gate is on from here
    answer = {}
    try:
        doc = xacro.process_file(request['file'], mappings=request['args'])
        answer['urdf'] = doc.toxml()
    except SystemExit:
        answer['error'] = err_buf.getvalue().strip() or 'xacro exited'
    except BaseException as err:        # XacroException, expat errors, NameError, ...
        if _out_of_memory(err):
            answer = {'error': 'MemoryError', 'memory': True}
        else:
            msg = str(err) or type(err).__name__
            extra = err_buf.getvalue().strip()
            answer['error'] = msg + ((' (%s)' % extra) if extra else '')
    if refused:
        answer.pop('urdf', None)
        answer['refused'] = [list(r) for r in refused]
    out.write(json.dumps(answer))
    out.flush()
    return 0


if __name__ == '__main__':
    sys.exit(main())
