"""Saving and loading trajectories by variable name (trep.save_trajectory / load_trajectory).

File format
-----------
A NumPy ``.npz`` archive (written with :func:`numpy.savez`, readable with
``numpy.load(filename, allow_pickle=False)``) holding these named arrays:

===================  ==========================  =================================================
array                shape / dtype               meaning
===================  ==========================  =================================================
``format``           () str                      ``'ros_vi-trajectory-1'``
``t``                (N,) float                  time [s]
``Q``                (N, nQ) float               configurations (rad or m per config)
``Q_names``          (nQ,) str                   config names, in the column order of ``Q``
``p``                (N, nQd) float              discrete momenta of the dynamic configs
``p_names``          (nQd,) str                  dynamic config names (columns of ``p``)
``v``                (N, nQk) float              kinematic velocities
``v_names``          (nQk,) str                  kinematic config names (columns of ``v``)
``u``                (N-1, nu) float             force inputs
``u_names``          (nu,) str                   input names (columns of ``u``)
``rho``              (N-1, nQk) float            kinematic inputs (next kinematic configs)
``rho_names``        (nQk,) str                  kinematic config names (columns of ``rho``)
===================  ==========================  =================================================

A component that was not given to :func:`save_trajectory` is simply absent from the archive.
Loading maps columns to the target system by name: columns for variables the system does not
have are dropped, variables missing from the file are filled with zeros.  (numpy appends
``.npz`` to a file name without that suffix.)
"""
import numpy as np

__all__ = ['save_trajectory', 'load_trajectory', 'FORMAT']

FORMAT = 'ros_vi-trajectory-1'


def _names(items):
    return np.array([item.name for item in items], dtype=str)


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


def save_trajectory(filename, system, t, Q=None, p=None, v=None, u=None, rho=None):
    """Save a trajectory of ``system`` to ``filename`` (format: see the module docstring).

    t (N,) [s]; Q (N, nQ); p (N, nQd); v (N, nQk); u (N-1, nu); rho (N-1, nQk).  Components
    given as None are not stored (they load as zeros).
    """
    t = np.asarray(t, dtype=float)
    if t.ndim != 1:
        raise ValueError('save_trajectory: t must be 1-D, got shape %r' % (t.shape,))
    N = t.shape[0]
    data = {'format': np.array(FORMAT), 't': t}
    parts = (('Q', Q, N, system.configs), ('p', p, N, system.dyn_configs),
             ('v', v, N, system.kin_configs), ('u', u, N - 1, system.inputs),
             ('rho', rho, N - 1, system.kin_configs))
    for key, values, rows, items in parts:
        if values is None:
            continue
        names = _names(items)
        data[key] = _block(values, rows, names, key)
        data[key + '_names'] = names
    with open(filename, 'wb') as fh:
        np.savez(fh, **data)


def load_trajectory(filename, system=None):
    """Load a trajectory saved by :func:`save_trajectory`.

    With a ``system``, returns ``(t, Q, p, v, u, rho)`` arranged for that system's configs
    and inputs by name (missing variables are zero, unknown ones dropped).  Without one,
    returns a dict of the stored arrays.
    """
    with np.load(filename, allow_pickle=False) as archive:
        data = {key: archive[key] for key in archive.files}
    if 'format' not in data or str(data['format']) != FORMAT or 't' not in data:
        raise ValueError('load_trajectory: %r is not a %s file' % (filename, FORMAT))
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
