"""Pictures of a finished sweep (matplotlib, Agg): the basin map of a two-axis grid and the
histograms of a Monte-Carlo part."""
import os

import numpy as np

from .run import load_results

__all__ = ['plot_sweep', 'plot_basin', 'plot_histograms']

NOT_SETTLED_COLOUR = '#b0b0b0'      # ran to the end, never stayed in the target set
FAILED_COLOUR = '#d62728'           # did not run to the end (error)


def _label(name, units):
    unit = units.get(name, '')
    return '%s [%s]' % (name, unit) if unit else name


def _success(columns, has_target):
    ok = columns['ok']
    return ok & np.isfinite(columns['time_to_target']) if has_target else ok


def plot_basin(columns, info, path):
    """Heat map of ``time_to_target`` [s] over the two grid axes (first axis along x),
    not-settled and failed samples in their own colours; with random draws per grid point
    each cell shows the median over the draws that settled.  Writes ``path``."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch
    spec = info['spec']
    (xname, xs), (yname, ys) = list(spec['grid'].items())
    nx, ny = len(xs), len(ys)
    draws = info.get('random_samples') or 1
    ttt = columns['time_to_target'].reshape(nx, ny, draws)
    ok = columns['ok'].reshape(nx, ny, draws)
    settled = np.isfinite(ttt)
    with np.errstate(all='ignore'):
        value = np.where(settled.any(axis=2), np.nanmedian(np.where(settled, ttt, np.nan),
                                                           axis=2), np.nan)
    # 0 settled somewhere, 1 ran but never settled, 2 failed in every draw
    status = np.where(settled.any(axis=2), 0, np.where(ok.any(axis=2), 1, 2))

    fig, ax = plt.subplots(figsize=(7.5, 6.0), dpi=100)
    extent = _extent(xs) + _extent(ys)
    image = ax.imshow(np.ma.masked_invalid(value).T, origin='lower', extent=extent,
                      aspect='auto', cmap='viridis', interpolation='nearest')
    overlay = np.ma.masked_equal(status, 0).T
    ax.imshow(overlay, origin='lower', extent=extent, aspect='auto', interpolation='nearest',
              cmap=ListedColormap([NOT_SETTLED_COLOUR, FAILED_COLOUR]), vmin=1, vmax=2)
    bar = fig.colorbar(image, ax=ax)
    bar.set_label('time to target [s]')
    units = info.get('units', {})
    ax.set_xlabel(_label(xname, units))
    ax.set_ylabel(_label(yname, units))
    n = columns['ok'].size
    reached = int(np.count_nonzero(_success(columns, True)))
    title = ('%s, controller %s: %d of %d samples reach the target'
             % (spec['model'], spec['controller'], reached, n))
    if draws > 1:
        title += '\n(cell: median over its %d random draws that settled)' % draws
    ax.set_title(title)
    handles = [Patch(color=colour, label=label) for code, colour, label in (
        (1, NOT_SETTLED_COLOUR, 'not settled'), (2, FAILED_COLOUR, 'failed'))
        if np.any(status == code)]
    if handles:
        ax.legend(handles=handles, loc='upper right', fontsize='small', framealpha=0.8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _extent(values):
    values = np.asarray(values, dtype=float)
    if values.size == 1:
        return [values[0] - 0.5, values[0] + 0.5]
    step = (values[-1] - values[0]) / (values.size - 1)
    return [values[0] - step / 2, values[-1] + step / 2]


def plot_histograms(columns, info, path):
    """Histograms of ``time_to_target`` [s] (samples that settled) and ``max_effort``
    (per input [N m or N], samples that ran to the end); the success rate in the title.
    Writes ``path``."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    spec = info['spec']
    has_target = spec.get('target') is not None
    success = _success(columns, has_target)
    n = success.size
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10.0, 4.2), dpi=100)
    ttt = columns['time_to_target'][np.isfinite(columns['time_to_target'])]
    if has_target and ttt.size:
        a1.hist(ttt, bins=min(50, max(5, ttt.size // 5)), color='tab:blue')
    else:
        a1.text(0.5, 0.5, 'no sample settled' if has_target else 'no target',
                ha='center', va='center', transform=a1.transAxes)
    a1.set_xlabel('time to target [s]')
    a1.set_ylabel('samples')
    inputs = [str(x) for x in columns.get('inputs', [])]
    units = info.get('effort_units') or [''] * len(inputs)
    effort = columns['max_effort'][columns['ok']]
    for j in range(effort.shape[1] if effort.shape[0] else 0):
        unit = ' [%s]' % units[j] if j < len(units) and units[j] else ''
        a2.hist(effort[:, j], bins=min(50, max(5, effort.shape[0] // 5)), alpha=0.7,
                label=(inputs[j] if j < len(inputs) else 'input %d' % j) + unit)
    if effort.shape[0] and effort.shape[1]:
        a2.legend(fontsize='small')
    shared = set(u for u in units if u)
    a2.set_xlabel('largest |effort| per sample' + (' [%s]' % shared.pop()
                                                    if len(shared) == 1 else ''))
    a2.set_ylabel('samples')
    rate = 100.0 * np.count_nonzero(success) / n if n else 0.0
    what = 'reached the target' if has_target else 'ran to the end'
    fig.suptitle('%s, controller %s: success rate %.1f %% (%d of %d %s; %d failed)'
                 % (spec['model'], spec['controller'], rate, np.count_nonzero(success), n,
                    what, np.count_nonzero(~columns['ok'])))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_sweep(out_dir):
    """The pictures of the sweep in ``out_dir`` (after :func:`~ros_vi.sweep.run_sweep`):
    ``basin.png`` when the grid has exactly two axes, ``histograms.png`` when the spec has a
    random part.  Returns the paths written (possibly none)."""
    columns, info = load_results(out_dir)
    spec = info['spec']
    written = []
    if len(spec.get('grid') or {}) == 2:
        written.append(plot_basin(columns, info, os.path.join(out_dir, 'basin.png')))
    if spec.get('random'):
        written.append(plot_histograms(columns, info, os.path.join(out_dir,
                                                                    'histograms.png')))
    return written
