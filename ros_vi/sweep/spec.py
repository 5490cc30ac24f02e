"""The sweep spec: a YAML file (or dict) checked field by field, and its table of samples.

A spec names a model, a controller, the run (dt, duration, target) and the axes that vary:
a ``grid`` (cartesian product, first axis slowest) and/or a ``random`` part (``samples``
draws per grid point).  :func:`load_spec` returns a :class:`Spec`; every refusal is a
ValueError that starts with ``spec field <name>:`` (docs/sweeps.md has the format).  A spec
file is read by the bounded YAML loader (:func:`ros_vi.bounded.load_yaml`: no duplicate
keys, aliases expanded within limits), and a spec's size is bounded before anything is
allocated: at most :data:`MAX_SAMPLES` rows, :data:`MAX_STEPS` steps per sample, a
``delay`` no longer than the run.
"""
import copy
import hashlib
import inspect
import json
import math
import os
from dataclasses import dataclass, field

import numpy as np

from ..bounded import load_yaml
from ..errors import name_list, shorten

__all__ = ['Spec', 'load_spec', 'SpecError', 'FIELDS', 'CONTROLLERS', 'MAX_SAMPLES',
           'MAX_STEPS']

FIELDS = ('description', 'model', 'controller', 'controller_params', 'dt', 'duration',
          'target', 'grid', 'random', 'chunk_size')
CONTROLLERS = ('none', 'lqr', 'swingup')
DEFAULT_CHUNK_SIZE = 1024
DEFAULT_GRAVITY = 9.81          # [m/s^2] URDF files (the demos bring their own)
TARGET_FIELDS = ('goal', 'q_tol', 'v_tol', 'configs')
RANDOM_FIELDS = ('samples', 'seed')
DISTRIBUTIONS = ('uniform', 'normal')
# factory arguments that the sweep itself supplies
_SUPPLIED = ('system', 'dt', 'goal')
#: rows of a sweep's sample table (grid points x random draws)
MAX_SAMPLES = 10_000_000
#: steps of one sample (duration / dt)
MAX_STEPS = 10_000_000


class SpecError(ValueError):
    """A spec refused: the message names the field."""


def _fail(name, message):
    # a field name comes from the spec's keys, a message may quote a value: both bounded
    raise SpecError('spec field %s: %s' % (shorten(str(name), limit=200, quote=False),
                                           shorten(message, limit=2000, quote=False)))


@dataclass
class Spec:
    """A checked sweep spec.

    ``data`` is the normalised spec (plain JSON types; grid axes as explicit value lists)
    and ``hash`` its sha256 (with the model file's own hash), which identifies a sweep's
    results.  ``grid``: [(axis name, values (n_i,))]; ``random``: [(axis name,
    'uniform' | 'normal', a, b)] with ``samples`` draws per grid point and ``seed``.
    ``joints`` the model's configs, ``inputs`` its inputs, ``start (nQ,)`` the state every
    sample starts from where no axis says otherwise (at rest), ``units`` {axis: unit},
    ``effort_units`` one per input ('N m' or 'N').
    """
    data: dict
    hash: str
    source: str
    model: str
    demo: str
    urdf_text: str
    base_dir: str
    controller: str
    controller_params: dict
    dt: float
    duration: float
    target: dict
    grid: list
    random: list
    samples: int
    seed: int
    chunk_size: int
    joints: list
    inputs: list
    start: np.ndarray
    units: dict = field(default_factory=dict)
    effort_units: list = field(default_factory=list)

    @property
    def axes(self):
        """Every axis name: the grid's in order, then the random part's."""
        return [name for name, _ in self.grid] + [r[0] for r in self.random]

    @property
    def grid_shape(self):
        return tuple(len(values) for _, values in self.grid)

    @property
    def n_grid(self):
        return int(np.prod(self.grid_shape)) if self.grid else 1

    @property
    def n_samples(self):
        """Rows of the sample table: grid points x random draws per point."""
        return self.n_grid * (self.samples if self.random else 1)

    @property
    def n_chunks(self):
        return -(-self.n_samples // self.chunk_size)

    def chunk_rows(self, index):
        """(first, stop) rows of chunk ``index``."""
        if not 0 <= index < self.n_chunks:
            raise ValueError('chunk %r: the sweep has chunks 0 .. %d'
                             % (index, self.n_chunks - 1))
        first = index * self.chunk_size
        return first, min(first + self.chunk_size, self.n_samples)

    def chunk_table(self, index):
        """``{'sample': (n,) int64 row numbers, axis name: (n,) float}`` for chunk ``index``.

        Grid values follow from the row number (row = grid point * draws + draw, grid
        points in C order: the first axis varies slowest).  The random values are drawn for
        the whole chunk from ``numpy.random.default_rng([seed, index])``, axis after axis in
        the spec's order, so a chunk's draws depend on the seed and its index only, never
        on which process computes it."""
        first, stop = self.chunk_rows(index)
        rows = np.arange(first, stop, dtype=np.int64)
        table = {'sample': rows}
        draws = self.samples if self.random else 1
        point = rows // draws
        if self.grid:
            idx = np.unravel_index(point, self.grid_shape)
            for (name, values), i in zip(self.grid, idx):
                table[name] = np.asarray(values, dtype=float)[i]
        if self.random:
            rng = np.random.default_rng([self.seed, index])
            for name, kind, a, b in self.random:
                if kind == 'uniform':
                    table[name] = rng.uniform(a, b, size=rows.size)
                else:
                    table[name] = rng.normal(a, b, size=rows.size)
        return table

    def table(self):
        """The whole sample table (every chunk's :meth:`chunk_table` joined)."""
        parts = [self.chunk_table(i) for i in range(self.n_chunks)]
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


# ------------------------------------------------------------------ model and controller

def _is_path(text):
    return os.sep in text or '/' in text or text.endswith(('.urdf', '.xacro', '.xml'))


def resolve_model(model, base_dir):
    """``(demo name or None, URDF text or None, folder for relative mesh paths, name)`` of the
    spec's ``model``: a demo (``DEMOS``), another shipped model, or a URDF/xacro file
    (relative to ``base_dir``, the spec file's folder)."""
    from ..control.presets import DEMOS
    from .. import resources
    from ..urdf import URDFError, load_urdf_text
    if not isinstance(model, str) or not model:
        _fail('model', 'expected a demo name (%s) or the path of a URDF file, got %s'
              % (', '.join(sorted(DEMOS)), shorten(model)))
    if model in DEMOS:
        return model, None, None, model
    if _is_path(model):
        path = model if os.path.isabs(model) else os.path.join(base_dir, model)
        path = os.path.abspath(path)
        if not os.path.isfile(path):
            _fail('model', 'no such file %s' % shorten(path))
        try:
            text = load_urdf_text(path)
        except URDFError as err:
            _fail('model', '%s: %s' % (path, err))
        return None, text, os.path.dirname(path), path
    try:
        path = resources.shipped_model(model)
    except (resources.ResourceError, ValueError):
        _fail('model', 'unknown model %s: give a URDF file or one of the demos: %s'
              % (shorten(model), ', '.join(sorted(DEMOS))))
    with open(path, encoding='utf-8') as fh:
        return None, fh.read(), os.path.dirname(path), model


def build_model(demo, urdf_text, base_dir):
    """A fresh System: the demo's model, or the URDF with |g| = 9.81 m/s^2 along -z."""
    from ..control.presets import DEMOS
    from ..urdf import import_urdf
    if demo is not None:
        return DEMOS[demo].model()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')          # importer quirks: `ros-vi info` lists them
        return import_urdf(urdf_text, gravity=(0.0, 0.0, -DEFAULT_GRAVITY), base_dir=base_dir)


def _urdf_lqr(system, dt, goal, Q=None, R=None, u_max=None, horizon=None):
    """The LQR of a URDF model about ``goal`` (held against gravity)."""
    from ..control import LQR
    return LQR(system, dt, goal, Q=Q, R=R, u_max=u_max, horizon=horizon)


def controller_factory(demo, kind):
    """``f(system, dt, goal, **params) -> Controller`` for the spec's controller, or None
    for 'none'."""
    from ..control.presets import DEMOS
    if kind == 'none':
        return None
    if demo is None:
        return _urdf_lqr
    factory = DEMOS[demo].controller if kind == 'swingup' else DEMOS[demo].lqr
    return lambda system, dt, goal, **params: factory(system, dt=dt, **params)


def controller_keywords(demo, kind):
    """The keyword arguments the spec's controller accepts (``controller_params`` and
    ``controller.<kwarg>`` axes)."""
    from ..control.presets import DEMOS
    if kind == 'none':
        return []
    if demo is None:
        fn = _urdf_lqr
    else:
        fn = DEMOS[demo].controller if kind == 'swingup' else DEMOS[demo].lqr
    return [p for p in inspect.signature(fn).parameters if p not in _SUPPLIED]


# ------------------------------------------------------------------ fields

def _number(name, value, positive=False):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(name, 'expected a number, got %s' % shorten(value))
    value = float(value)
    if not math.isfinite(value):
        _fail(name, 'must be finite, got %r' % value)
    if positive and not value > 0:
        _fail(name, 'must be > 0, got %r' % value)
    return value


def _integer(name, value, minimum, maximum=None, limit=''):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or value != int(value):
        _fail(name, 'expected an integer, got %s' % shorten(value))
    if int(value) < minimum:
        _fail(name, 'must be >= %d, got %r' % (minimum, value))
    if maximum is not None and int(value) > maximum:
        _fail(name, '%s is more than the %s a sweep may have (%s)'
              % (format(int(value), ','), format(maximum, ','), limit))
    return int(value)


def _mapping(name, value):
    if not isinstance(value, dict):
        _fail(name, 'expected a mapping, got %s' % shorten(value))
    return value


def _jsonable(name, value):
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        _fail(name, 'expected numbers, lists of numbers or strings, got %s' % shorten(value))
    return copy.deepcopy(value)


def _unit(system, angles, name):
    """The unit of axis ``name`` (for plot labels)."""
    def joint_unit(joint, angular, linear):
        i = [c.name for c in system.configs].index(joint)
        return angular if angles[i] else linear
    head, _, rest = name.partition('.')
    if head == 'q0':
        return joint_unit(rest, 'rad', 'm')
    if head == 'dq0':
        return joint_unit(rest, 'rad/s', 'm/s')
    if head == 'damping':
        return joint_unit(rest, 'N m s/rad', 'N s/m')
    if head == 'effort_limit':
        return joint_unit(rest, 'N m', 'N')
    return {'mass_scale': '1', 'mass': 'kg', 'gravity': 'm/s^2', 'delay': 's'}.get(head, '')


class _Axes:
    """Checks axis names against the model (joints, parameters, controller keywords)."""

    def __init__(self, system, keywords, kind):
        from ..batch.parameters import parameter_names
        self.joints = [c.name for c in system.configs]
        self.parameters = parameter_names(system)
        self.keywords = keywords
        self.kind = kind
        self.system = system

    def check(self, field_name, name):
        head, dot, rest = name.partition('.')
        if head in ('q0', 'dq0') and dot:
            if rest not in self.joints:
                _fail(field_name, 'unknown joint %r (joints: %s)'
                      % (rest, name_list(self.joints, quote=str)))
            return
        if head == 'controller' and dot:
            if self.kind == 'none':
                _fail(field_name, 'controller none has no parameters to vary')
            if rest not in self.keywords:
                _fail(field_name, 'unknown controller parameter %r (controller %s takes: %s)'
                      % (rest, self.kind, ', '.join(self.keywords)))
            return
        if name in self.parameters:
            return
        if head in ('damping', 'effort_limit') and dot:
            _fail(field_name, 'unknown joint %r (joints: %s)'
                  % (rest, name_list(self.joints, quote=str)))
        if head == 'mass' and dot:
            links = [p[5:] for p in self.parameters if p.startswith('mass.')]
            _fail(field_name, 'unknown link %r (links with mass: %s)'
                  % (rest, name_list(links, quote=str)))
        _fail(field_name, 'unknown axis %r: use q0.<joint>, dq0.<joint>, controller.<kwarg> '
              'or a parameter (%s)' % (name, name_list(self.parameters, quote=str)))

    def check_values(self, field_name, name, values):
        """Parameter ranges (the rule of ros_vi.batch.parameters) for fixed values."""
        from ..batch.parameters import check_parameters
        if name.split('.')[0] in ('q0', 'dq0', 'controller'):
            return
        try:
            check_parameters(self.system, {name: values}, len(values))
        except ValueError as err:
            _fail(field_name, str(err))


def _check_delay(field_name, name, longest, duration):
    """A ``delay`` axis may not exceed the run: an input delayed beyond ``duration`` [s]
    never arrives (and its buffer would be as long as the delay)."""
    if name == 'delay' and longest > duration:
        _fail(field_name, 'a delay of %g s is longer than the run (duration %g s)'
              % (longest, duration))


def _grid_axis(field_name, value):
    value = _mapping(field_name, value)
    if 'values' in value:
        extra = sorted(set(value) - {'values'})
        if extra:
            _fail(field_name, 'give either values or from/to/num, not both (%s)'
                  % ', '.join(extra))
        values = value['values']
        if not isinstance(values, (list, tuple)):
            _fail(field_name + '.values', 'expected a list of numbers, got %s' % shorten(values))
        if not values:
            _fail(field_name + '.values', 'empty list: an axis needs at least one value')
        if len(values) > MAX_SAMPLES:
            _fail(field_name + '.values', '%s values, more than the %s samples a sweep may '
                  'have (MAX_SAMPLES)' % (format(len(values), ','), format(MAX_SAMPLES, ',')))
        return np.array([_number('%s.values[%d]' % (field_name, i), v)
                         for i, v in enumerate(values)])
    missing = [k for k in ('from', 'to', 'num') if k not in value]
    unknown = sorted(set(value) - {'from', 'to', 'num'})
    if unknown:
        _fail(field_name, 'unknown key %s (an axis is {from, to, num} or {values: [...]})'
              % ', '.join(repr(k) for k in unknown))
    if missing:
        _fail(field_name, 'missing %s (an axis is {from, to, num} or {values: [...]})'
              % ', '.join(missing))
    lo = _number(field_name + '.from', value['from'])
    hi = _number(field_name + '.to', value['to'])
    num = _integer(field_name + '.num', value['num'], 1, MAX_SAMPLES, 'MAX_SAMPLES')
    return np.linspace(lo, hi, num)


def _distribution(field_name, value):
    value = _mapping(field_name, value)
    if len(value) == 1 and next(iter(value)) not in DISTRIBUTIONS:
        _fail(field_name, 'unknown distribution %r (use uniform: [low, high] or normal: '
              '[mean, std])' % next(iter(value)))
    if len(value) != 1:
        _fail(field_name, 'expected one distribution, uniform: [low, high] or normal: '
              '[mean, std], got %s' % shorten(value))
    kind, params = next(iter(value.items()))
    where = '%s.%s' % (field_name, kind)
    if not isinstance(params, (list, tuple)) or len(params) != 2:
        _fail(where, 'expected two numbers [%s], got %s'
              % ('low, high' if kind == 'uniform' else 'mean, std', shorten(params)))
    a = _number(where + '[0]', params[0])
    b = _number(where + '[1]', params[1])
    if kind == 'uniform' and not a <= b:
        _fail(where, 'low %r must be <= high %r' % (a, b))
    if kind == 'normal' and not b >= 0:
        _fail(where, 'std must be >= 0, got %r' % b)
    return kind, a, b


def _spec_hash(data, urdf_text):
    """sha256 of what determines the results: the normalised spec without its description,
    and the URDF text."""
    data = {k: v for k, v in data.items() if k != 'description'}
    h = hashlib.sha256(json.dumps(data, sort_keys=True).encode())
    if urdf_text is not None:
        h.update(hashlib.sha256(urdf_text.encode()).digest())
    return h.hexdigest()


def load_spec(spec):
    """A :class:`Spec` from a YAML file path or a dict of the same fields.

    Raises ValueError (:class:`SpecError`) naming the field, e.g. ``spec field
    grid.q0.thetta: unknown joint 'thetta' (joints: theta)``.
    """
    if isinstance(spec, Spec):
        return spec
    source, base_dir = '<dict>', os.getcwd()
    if isinstance(spec, (str, os.PathLike)):
        source = os.fspath(spec)
        base_dir = os.path.dirname(os.path.abspath(source))
        try:
            raw = load_yaml(source, 'spec file %r' % source)
        except OSError as err:
            raise SpecError('spec file %r: %s' % (source, err.strerror or err)) from None
        except ValueError as err:
            raise SpecError(str(err)) from None
    else:
        raw = spec
    if not isinstance(raw, dict):
        raise SpecError('spec: expected a mapping of fields (%s), got %s'
                        % (', '.join(FIELDS), shorten(raw)))
    unknown = [k for k in raw if k not in FIELDS]
    if unknown:
        _fail(unknown[0], 'unknown field (fields: %s)' % ', '.join(FIELDS))
    if 'model' not in raw:
        _fail('model', 'missing (a demo name or the path of a URDF file)')

    from ..control.presets import DEMOS
    demo, urdf_text, model_dir, model_name = resolve_model(raw['model'], base_dir)
    try:
        system = build_model(demo, urdf_text, model_dir)
    except ValueError as err:
        _fail('model', str(err))
    joints = [c.name for c in system.configs]
    if system.nQk:
        _fail('model', 'the model has kinematic configs %s; a sweep needs a model without '
              'them' % [c.name for c in system.kin_configs])

    kind = raw.get('controller', 'none')
    if kind not in CONTROLLERS:
        _fail('controller', 'expected one of %s, got %s' % (', '.join(CONTROLLERS), shorten(kind)))
    if demo is None and kind == 'swingup':
        _fail('controller', 'swingup is available for the demos (%s); use lqr or none for %r'
              % (', '.join(sorted(DEMOS)), model_name))
    keywords = controller_keywords(demo, kind)
    params = _mapping('controller_params', raw.get('controller_params') or {})
    for key in params:
        if kind == 'none':
            _fail('controller_params.%s' % key, 'controller none takes no parameters')
        if key not in keywords:
            _fail('controller_params.%s' % key, 'unknown controller parameter %r (controller '
                  '%s takes: %s)' % (key, kind, ', '.join(keywords)))
    params = {k: _jsonable('controller_params.%s' % k, v) for k, v in params.items()}

    the_demo = DEMOS.get(demo) if demo else None
    for name in ('dt', 'duration'):
        if name not in raw and the_demo is None:
            _fail(name, 'missing (required for a URDF model) [s]')
    dt = _number('dt', raw.get('dt', the_demo.dt if the_demo else None), positive=True)
    duration = _number('duration', raw.get('duration', the_demo.duration if the_demo
                                               else None), positive=True)
    steps = duration / dt
    if not steps <= MAX_STEPS:         # also inf: 1e300 s at dt = 1e-300 s
        _fail('duration', '%g s at dt = %g s is %s steps, more than the %s a sample may take '
              '(MAX_STEPS)' % (duration, dt, format(steps, '.3g'), format(MAX_STEPS, ',')))
    if round(steps) < 1:
        _fail('duration', '%g s is less than one step of dt = %g s' % (duration, dt))

    start = np.array(the_demo.start if the_demo else system.q, dtype=float)
    target = raw.get('target')
    if target is None and the_demo is not None:
        target = {'goal': [float(x) for x in the_demo.goal]}
    if target is not None:
        target = dict(_mapping('target', target))
        extra = [k for k in target if k not in TARGET_FIELDS]
        if extra:
            _fail('target.%s' % extra[0], 'unknown field (target fields: %s)'
                  % ', '.join(TARGET_FIELDS))
        if 'goal' not in target:
            _fail('target.goal', 'missing: %d values (configs %s)' % (len(joints), joints))
        goal = target['goal']
        if isinstance(goal, dict):
            bad = [k for k in goal if k not in joints]
            if bad:
                _fail('target.goal', 'unknown joint %r (joints: %s)'
                      % (bad[0], name_list(joints, quote=str)))
            goal = [goal.get(j, float(start[i])) for i, j in enumerate(joints)]
        if not isinstance(goal, (list, tuple)):
            goal = [goal]
        goal = [_number('target.goal', g) for g in goal]
        configs = target.get('configs')
        if configs is not None:
            if not isinstance(configs, (list, tuple)) or not configs:
                _fail('target.configs', 'expected a list of joint names, got %s'
                      % shorten(configs))
            for c in configs:
                if c not in joints:
                    _fail('target.configs', 'unknown joint %r (joints: %s)'
                          % (c, name_list(joints, quote=str)))
            configs = [str(c) for c in configs]
        target = {'goal': goal, 'q_tol': _jsonable('target.q_tol', target.get('q_tol', 0.05)),
                  'v_tol': _jsonable('target.v_tol', target.get('v_tol', 0.1)),
                  'configs': configs}
        from ..batch import Target
        try:
            Target(**target).arrays(system)
        except (ValueError, TypeError) as err:
            _fail('target', str(err))

    # the nominal controller: the fixed parameters must give a design
    factory = controller_factory(demo, kind)
    if factory is not None:
        goal = np.array(target['goal']) if target is not None else start
        try:
            factory(build_model(demo, urdf_text, model_dir), dt, goal, **params)
        except (ValueError, TypeError, ArithmeticError, np.linalg.LinAlgError) as err:
            _fail('controller_params', 'the %s controller cannot be designed: %s'
                  % (kind, err))

    axes = _Axes(system, keywords, kind)
    grid = []
    raw_grid = _mapping('grid', raw.get('grid') or {})
    for name, value in raw_grid.items():
        where = 'grid.%s' % name
        axes.check(where, str(name))
        values = _grid_axis(where, value)
        axes.check_values(where, name, values)
        _check_delay(where, name, values.max(), duration)
        grid.append((str(name), values))
    n_grid = math.prod(len(values) for _, values in grid)
    if n_grid > MAX_SAMPLES:
        _fail('grid', '%s grid points (%s), more than the %s samples a sweep may have '
              '(MAX_SAMPLES)' % (format(n_grid, ','), ' x '.join(
                  str(len(values)) for _, values in grid), format(MAX_SAMPLES, ',')))

    random, samples, seed = [], 0, 0
    if raw.get('random') is not None:
        rnd = _mapping('random', raw['random'])
        if 'samples' not in rnd:
            _fail('random.samples', 'missing: the number of draws (per grid point)')
        samples = _integer('random.samples', rnd['samples'], 1, MAX_SAMPLES, 'MAX_SAMPLES')
        if n_grid * samples > MAX_SAMPLES:
            _fail('random.samples', '%s draws per grid point x %s grid points is %s samples, '
                  'more than the %s a sweep may have (MAX_SAMPLES)'
                  % (format(samples, ','), format(n_grid, ','), format(n_grid * samples, ','),
                     format(MAX_SAMPLES, ',')))
        seed = _integer('random.seed', rnd.get('seed', 0), 0)
        for name, value in rnd.items():
            if name in RANDOM_FIELDS:
                continue
            where = 'random.%s' % name
            axes.check(where, str(name))
            if name in raw_grid:
                _fail(where, 'axis %r is also a grid axis' % name)
            random.append((str(name),) + _distribution(where, value))
            if random[-1][1] == 'uniform':
                _check_delay(where, name, random[-1][3], duration)
        if not random:
            _fail('random', 'no axis to draw: add e.g. mass_scale: {uniform: [0.9, 1.1]}')
    if not grid and not random:
        _fail('grid', 'no axis: give a grid, a random part or both')
    chunk_size = _integer('chunk_size', raw.get('chunk_size', DEFAULT_CHUNK_SIZE), 1,
                          MAX_SAMPLES, 'MAX_SAMPLES')

    data = {
        'model': model_name, 'controller': kind, 'controller_params': params, 'dt': dt,
        'duration': duration, 'target': target,
        'grid': {name: [float(v) for v in values] for name, values in grid},
        'random': ({'samples': samples, 'seed': seed,
                    **{name: {k: [a, b]} for name, k, a, b in random}} if random else None),
        'chunk_size': chunk_size,
    }
    if raw.get('description') is not None:
        data['description'] = str(raw['description'])
    from ..control.base import angle_mask
    angles = angle_mask(system)
    names = [n for n, _ in grid] + [r[0] for r in random]
    return Spec(data=data, hash=_spec_hash(data, urdf_text), source=source, model=model_name,
                demo=demo, urdf_text=urdf_text, base_dir=model_dir, controller=kind,
                controller_params=params, dt=dt, duration=duration, target=target, grid=grid,
                random=random, samples=samples, seed=seed, chunk_size=chunk_size,
                joints=joints, inputs=[i.name for i in system.inputs], start=start,
                units={n: _unit(system, angles, n) for n in names},
                effort_units=[_unit(system, angles, 'effort_limit.' + i.name)
                              if i.name in joints else '' for i in system.inputs])
