"""Saving and loading trajectories by variable name (trep.save_trajectory / load_trajectory).

The file type follows the file name:

* ``*.mat`` -- a MATLAB (v5) file written with :func:`scipy.io.savemat`, in trep's layout,
  so files written by trep load here and files written here load in trep (and MATLAB);
* ``*.npz`` -- a NumPy archive (:func:`numpy.savez`, readable with
  ``numpy.load(filename, allow_pickle=False)``).

Any other suffix is refused by :func:`save_trajectory` with ``ValueError``.
:func:`load_trajectory` recognises the two formats by their content (a ``.mat`` name holding
an older ros_vi ``.npz`` archive still loads) and raises ``ValueError`` naming the file for
anything else (unknown content, truncated or corrupt files).

Contents (N time steps)
-----------------------
=============  =============  ==========  ===========================================
MATLAB name    ``.npz`` name  shape       meaning
=============  =============  ==========  ===========================================
``time``       ``t``          (N,) [s]    time (MATLAB: a 1 x N row)
``Q``          ``Q``          (N, nQ)     configurations (rad or m per config)
``p``          ``p``          (N, nQd)    discrete momenta of the dynamic configs
``v``          ``v``          (N, nQk)    kinematic velocities
``u``          ``u``          (N-1, nu)   force inputs
``rho``        ``rho``        (N-1, nQk)  kinematic inputs (next kinematic configs)
``Q_index``    ``Q_names``    (nQ,)       config names, column order of ``Q``
``p_index``    ``p_names``    (nQd,)      dynamic config names (columns of ``p``)
``v_index``    ``v_names``    (nQk,)      kinematic config names (columns of ``v``)
``u_index``    ``u_names``    (nu,)       input names (columns of ``u``)
``rho_index``  ``rho_names``  (nQk,)      kinematic config names (columns of ``rho``)
``charts``     ``charts``     (N, n, 3,   free joints only: the chart each state's
                              3)          rotation angles are in (``DSystem.charts``)
``charts_      ``charts_      (n,)        free joint names (second axis of ``charts``)
index``        names``
=============  =============  ==========  ===========================================

MATLAB name lists are cell arrays of strings (as trep writes them) and are always stored;
the ``.npz`` archive also holds ``format`` = ``'ros_vi-trajectory-1'`` and stores a name
list only with its component.  A component not given to :func:`save_trajectory` is absent
from the file.  Loading maps columns to the target system by name: columns for variables
the system does not have are dropped; variables (or whole components) missing from the file
load as zeros.
"""
import os
import zipfile

import numpy as np

__all__ = ['save_trajectory', 'load_trajectory', 'FORMAT']

FORMAT = 'ros_vi-trajectory-1'
_PARTS = ('Q', 'p', 'v', 'u', 'rho')


def _names(items):
    return [item.name for item in items]


def _block(values, rows, names, what):
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 1 and len(names) == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim == 1 and len(names) == 0 and arr.shape[0] == 0:
        arr = np.zeros((rows, 0))
    if arr.ndim != 2 or arr.shape != (rows, len(names)):
        raise ValueError('save_trajectory: %s has shape %r, expected (%d, %d)'
                         % (what, arr.shape, rows, len(names)))
    return arr


def _kind(filename):
    ext = os.path.splitext(os.fspath(filename))[1].lower()
    if ext in ('.mat', '.npz'):
        return ext[1:]
    raise ValueError('trajectory file %r: unknown file type %r; use a name ending in .mat '
                     '(MATLAB, as trep) or .npz (NumPy)' % (filename, ext or '(none)'))


def save_trajectory(filename, system, t, Q=None, p=None, v=None, u=None, rho=None,
                    charts=None):
    """Save a trajectory of ``system`` to ``filename`` (``.mat`` or ``.npz``; see the module
    docstring for the layout).

    t (N,) [s]; Q (N, nQ); p (N, nQd); v (N, nQk); u (N-1, nu); rho (N-1, nQk); charts
    (N, n, 3, 3) for a system with n free joints (the reference attitudes its rotation
    angles are measured from at each time).  Components given as None are not stored (they
    load as zeros).
    """
    kind = _kind(filename)
    t = np.asarray(t, dtype=float)
    if t.ndim != 1:
        raise ValueError('save_trajectory: t must be 1-D, got shape %r' % (t.shape,))
    N = t.shape[0]
    items = {'Q': system.configs, 'p': system.dyn_configs, 'v': system.kin_configs,
             'u': system.inputs, 'rho': system.kin_configs}
    rows = {'Q': N, 'p': N, 'v': N, 'u': N - 1, 'rho': N - 1}
    given = dict(zip(_PARTS, (Q, p, v, u, rho)))
    blocks = {key: _block(given[key], rows[key], _names(items[key]), key)
              for key in _PARTS if given[key] is not None}
    names = {key: _names(items[key]) for key in _PARTS}
    if charts is not None:
        free = [j.name for j in system.free_joints]
        charts = np.asarray(charts, dtype=float)
        if charts.shape != (N, len(free), 3, 3):
            raise ValueError('save_trajectory: charts has shape %r, expected (%d, %d, 3, 3)'
                             % (charts.shape, N, len(free)))
        blocks['charts'] = charts
        names['charts'] = free
    if kind == 'mat':
        from scipy.io import savemat
        data = {'time': t}
        data.update(blocks)
        for key in names:       # cell arrays of strings, always present (as trep)
            data[key + '_index'] = np.array(names[key], dtype=object)
        savemat(filename, data)
        return
    data = {'format': np.array(FORMAT), 't': t}
    for key, arr in blocks.items():
        data[key] = arr
        data[key + '_names'] = np.array(names[key], dtype=str)
    with open(filename, 'wb') as fh:
        np.savez(fh, **data)


def _read_npz(filename):
    try:
        with np.load(filename, allow_pickle=False) as archive:
            data = {key: archive[key] for key in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise ValueError('load_trajectory: %r is not a readable .npz trajectory (%s)'
                         % (filename, exc)) from None
    if 'format' not in data or str(data['format']) != FORMAT or 't' not in data:
        raise ValueError('load_trajectory: %r is a NumPy archive but not a %s file'
                         % (filename, FORMAT))
    return data


def _cell_names(cell):
    return [str(np.asarray(s).ravel()[0]).strip() if np.asarray(s).size else ''
            for s in np.asarray(cell, dtype=object).ravel()]


def _read_mat(filename):
    from scipy.io import loadmat
    try:
        raw = loadmat(filename)
    except Exception as exc:   # scipy raises several types for bad or truncated files
        raise ValueError('load_trajectory: %r is not a readable MATLAB trajectory file (%s)'
                         % (filename, exc)) from None
    if 'time' not in raw:
        raise ValueError("load_trajectory: MATLAB file %r has no 'time' variable (not a "
                         "trajectory saved by trep or ros_vi)" % (filename,))
    t = np.atleast_1d(np.asarray(raw['time'], dtype=float).squeeze())
    N = t.shape[0]
    data = {'format': np.array(FORMAT), 't': t}
    for key in _PARTS:
        if key not in raw:
            continue
        names = _cell_names(raw[key + '_index']) if key + '_index' in raw else []
        rows = N if key in ('Q', 'p', 'v') else N - 1
        arr = np.asarray(raw[key], dtype=float)
        if arr.size == rows * len(names):
            arr = arr.reshape(rows, len(names))
        else:
            raise ValueError('load_trajectory: %r: %s has shape %r, which does not match '
                             '%d steps x %d names' % (filename, key, arr.shape, rows,
                                                      len(names)))
        data[key] = arr
        data[key + '_names'] = np.array(names, dtype=str)
    if 'charts' in raw:
        names = _cell_names(raw['charts_index']) if 'charts_index' in raw else []
        data['charts'] = np.asarray(raw['charts'], dtype=float).reshape(N, len(names), 3, 3)
        data['charts_names'] = np.array(names, dtype=str)
    return data


def load_trajectory(filename, system=None):
    """Load a trajectory saved by :func:`save_trajectory` or by trep (``.mat``).

    With a ``system``, returns ``(t, Q, p, v, u, rho)`` -- t (N,) [s], Q (N, nQ),
    p (N, nQd), v (N, nQk), u (N-1, nu), rho (N-1, nQk) -- arranged for that system's
    configs and inputs by name (missing variables are zero, unknown ones dropped).
    Without one, returns a dict of the stored arrays in the ``.npz`` naming (``t``, ``Q``,
    ``Q_names``, ...; see the module docstring) whatever the file type.
    """
    try:
        with open(filename, 'rb') as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise ValueError('load_trajectory: cannot read %r (%s)' % (filename, exc)) from None
    data = _read_npz(filename) if magic == b'PK\x03\x04' else _read_mat(filename)
    if system is None:
        return data
    t = data['t']
    N = t.shape[0]
    out = [t]
    for key, rows, items in (('Q', N, system.configs), ('p', N, system.dyn_configs),
                             ('v', N, system.kin_configs), ('u', N - 1, system.inputs),
                             ('rho', N - 1, system.kin_configs)):
        arr = np.zeros((rows, len(items)))
        if key in data:
            stored = list(data[key + '_names'])
            for j, item in enumerate(items):
                if item.name in stored:
                    arr[:, j] = data[key][:, stored.index(item.name)]
        out.append(arr)
    return tuple(out)
