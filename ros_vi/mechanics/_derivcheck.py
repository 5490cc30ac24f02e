"""Shared helpers for the ``validate_*`` derivative checkers of potentials, forces,
constraints and the tape measure: compare an exact derivative with central differences
of the next lower derivative at the system's current state."""
import numpy as np


def abstract(obj, method):
    """The error a base-class method raises when a subclass does not implement it."""
    return NotImplementedError('%s does not implement %s()' % (type(obj).__name__, method))


def check(system, attr, lower, exact, items, delta, tolerance, verbose, name):
    """True if ``exact(item)`` matches d lower() / d (system.data.<attr>[item]); attr is 'q', 'dq' or 'u' for every item.

    ``lower()`` returns a float or array; ``exact(item)`` the same shape.
    """
    ok = True
    arr = getattr(system.data, attr)
    for item in items:
        i = item.index
        base = arr[i]
        arr[i] = base + delta
        system.data.invalidate()
        fp = np.asarray(lower(), dtype=float)
        arr[i] = base - delta
        system.data.invalidate()
        fm = np.asarray(lower(), dtype=float)
        arr[i] = base
        system.data.invalidate()
        approx = (fp - fm) / (2 * delta)
        ex = np.asarray(exact(item), dtype=float)
        err = float(np.abs(ex - approx).max()) if ex.size else 0.0
        if not err <= tolerance:
            ok = False
            if verbose:
                print('%s: derivative with respect to %s: error %.3g (exact %s, approx %s)'
                      % (name, item.name, err, ex, approx))
    return ok
