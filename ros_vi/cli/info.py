"""Describe a model: its tree of links and joints, degrees of freedom, joint types and
limits, command interfaces, masses and inertias, and what the importer tolerated.

    ros-vi info arm7
    ros-vi info path/to/robot.urdf.xacro
    ros-vi info cartpole --json
"""
import json
import math
import sys

import numpy as np

from .models import resolve_model, setup_model
from .options import add_floating_base_argument

HELP = 'links, joints, limits, command interfaces, masses and importer warnings of a model'
# levels of the printed tree drawn as indentation; deeper joints are numbered instead
TREE_INDENT = 32


def add_arguments(parser):
    parser.add_argument('model', metavar='MODEL',
                        help='a URDF or xacro file, or a shipped model name')
    parser.add_argument('--json', action='store_true',
                        help='print the description as JSON (for scripts)')
    add_floating_base_argument(parser)


def describe(source):
    """The facts ``ros-vi info`` prints, as a dict of plain values (SI units)."""
    from ..urdf.parse import parse_xml, read_description
    setup = setup_model(source)
    system, quirks = setup.system, [str(q) for q in setup.warnings]
    robot = system.urdf
    description = read_description(parse_xml(source.text, source.path), source.path)
    controls = robot.joint_controls
    joints = []
    for j in description.joints:
        parts = [n for n in robot.joint_names if n.startswith(j.name + '_')
                 and getattr(robot.joint(n), 'urdf_joint', None) == j.name]
        if j.type in ('planar', 'floating') and parts:
            # several configs, one per part: described by its parts' names
            free = j.type == 'floating' and not j.euler
            joints.append({
                'name': j.name, 'type': j.type, 'parent': j.parent, 'child': j.child,
                'configs': parts, 'axis': None, 'lower': -math.inf, 'upper': math.inf,
                'effort': 0.0 if free else float(j.effort), 'velocity': math.inf,
                'damping': 0.0, 'friction': 0.0,
                'role': ('free joint: %d configs, no motor' % len(parts) if free
                         else '%d configs' % len(parts)),
                'command_interfaces': [], 'command_source': None, 'command_bounds': {},
                'initial_position': None, 'initial_velocity': None})
            continue
        info = robot.joint(j.name)
        if info.mimic is not None:
            role = 'mimic of %s (x %g %+g)' % info.mimic
        elif info.config is None:
            role = 'fixed'
        elif info.config.kinematic:
            role = 'kinematic (moves no mass; held)'
        else:
            role = 'dynamic'
        control = controls.get(j.name)
        # the simulator's own table: what the node and `ros-vi simulate` offer the joint
        offered = setup.interfaces.get(j.name)
        interfaces = list(offered.interfaces) if offered is not None else []
        origin = offered.source if offered is not None else None
        joints.append({
            'name': j.name, 'type': j.type, 'parent': j.parent, 'child': j.child,
            'axis': [float(a) for a in info.axis] if info.moving else None,
            'lower': float(info.lower), 'upper': float(info.upper),
            'effort': float(info.effort), 'velocity': float(info.velocity),
            'damping': float(info.damping), 'friction': float(info.friction),
            'role': role, 'command_interfaces': interfaces, 'command_source': origin,
            'command_bounds': {} if control is None else {
                name: [float(lo), float(hi)] for name, (lo, hi) in control.bounds.items()},
            'initial_position': None if control is None else control.initial_position,
            'initial_velocity': None if control is None else control.initial_velocity})
    links = []
    for name in description.links:
        mass, inertia, origin = description.inertials.get(
            name, (0.0, np.zeros((3, 3)), np.eye(4)))
        links.append({'name': name, 'mass': float(mass),
                      'com': [float(x) for x in origin[:3, 3]],
                      'inertia': [[float(x) for x in row] for row in inertia]})
    return {
        'model': source.name, 'path': source.path, 'robot': description.name,
        'root_link': description.root, 'dof': system.nQ, 'dynamic_dof': system.nQd,
        'configs': [c.name for c in system.configs],
        'mimic_joints': robot.mimic_joint_names,
        'total_mass': float(sum(link['mass'] for link in links)),
        'links': links, 'joints': joints,
        'ros2_control': [_block_facts(block) for block in robot.ros2_control],
        'warnings': quirks}


def _block_facts(block):
    """A :class:`~ros_vi.urdf.Ros2ControlBlock` as plain values (interfaces as written)."""
    def component(comp):
        return {'name': comp.name, 'mimic': comp.mimic, 'params': dict(comp.params),
                'command': [{'name': i.name, 'min': i.min, 'max': i.max,
                             'initial_value': i.initial_value, 'params': dict(i.params)}
                            for i in comp.command.values()],
                'state': [{'name': i.name, 'initial_value': i.initial_value,
                           'params': dict(i.params)} for i in comp.state.values()]}
    return {'name': block.name, 'type': block.type, 'plugin': block.plugin,
            'hardware_params': dict(block.hardware_params),
            'joints': [component(c) for c in block.joints.values()],
            'sensors': [component(c) for c in block.sensors.values()],
            'gpios': [component(c) for c in block.gpios.values()]}


def _fmt(x):
    return '-' if not math.isfinite(x) else '%g' % x


def _tree_lines(facts):
    """The tree of links and joints as text lines, depth first in file order (a stack, not
    recursion: a chain may be deeper than Python's recursion limit); levels deeper than
    :data:`TREE_INDENT` are not indented further but numbered."""
    children = {}
    for j in facts['joints']:
        children.setdefault(j['parent'], []).append(j)
    lines = [facts['root_link']]

    def below(link, indent, depth):
        kids = children.get(link, [])
        return [(j, indent, depth, i == len(kids) - 1) for i, j in enumerate(kids)][::-1]

    todo = below(facts['root_link'], '', 1)
    while todo:
        j, indent, depth, last = todo.pop()
        level = '' if depth <= TREE_INDENT else '[depth %d] ' % depth
        lines.append('%s%s %s%s [%s] -> %s' % (indent, '└─' if last else '├─', level,
                                              j['name'], j['type'], j['child']))
        if depth < TREE_INDENT:
            indent += '   ' if last else '│  '
        todo.extend(below(j['child'], indent, depth + 1))
    return lines


def print_description(facts, out=None):
    w = (out or sys.stdout).write
    moving = [j for j in facts['joints'] if j['role'] != 'fixed']
    w('%s (%s)\n' % (facts['model'], facts['path']))
    w('  %d DOF (%d dynamic), %d links, %d joints (%d moving, %d mimic), total mass %.4g kg\n'
      % (facts['dof'], facts['dynamic_dof'], len(facts['links']), len(facts['joints']),
         len(moving), len(facts['mimic_joints']), facts['total_mass']))
    w('\ntree:\n')
    for line in _tree_lines(facts):
        w('  %s\n' % line)
    w('\njoints (limits: rad or m, N m or N, rad/s or m/s):\n')
    header = ('joint', 'type', 'lower', 'upper', 'effort', 'velocity', 'damping', 'friction',
              'command', 'role')
    rows = [(j['name'], j['type'], _fmt(j['lower']), _fmt(j['upper']), _fmt(j['effort']),
             _fmt(j['velocity']), _fmt(j['damping']), _fmt(j['friction']),
             _commands(j), j['role']) for j in moving]
    _table(w, header, rows)
    for block in facts['ros2_control']:
        _print_block(w, block)
    w('\nlinks (mass kg, COM m in the link frame, inertia kg m^2 about the COM):\n')
    rows = [(l['name'], '%g' % l['mass'], ' '.join('%g' % c for c in l['com']),
             ' '.join('%g' % l['inertia'][a][b] for a, b in
                      ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))))
            for l in facts['links']]
    _table(w, ('link', 'mass', 'com xyz', 'ixx iyy izz ixy ixz iyz'), rows)
    w('\nimporter warnings: %s\n' % ('none' if not facts['warnings'] else ''))
    for q in facts['warnings']:
        w('  - %s\n' % q)


def _commands(joint):
    names = ','.join(joint['command_interfaces']) or '-'
    return names + ' (default)' if joint['command_source'] == 'default' else names


def _interface(spec, simulated=True):
    text = spec['name']
    if spec.get('min', -math.inf) != -math.inf or spec.get('max', math.inf) != math.inf:
        text += ' [%s, %s]' % (_fmt(spec['min']), _fmt(spec['max']))
    return text if simulated else text + ' (not simulated)'


def _print_block(w, block):
    from ..urdf.ros2_control import SIMULATED_INTERFACES
    w('\nros2_control %r (%s, plugin %s; command bounds in the joint units):\n'
      % (block['name'], block['type'], block['plugin'] or '-'))
    if block['hardware_params']:
        w('  hardware params: %s\n' % ', '.join(
            '%s=%s' % kv for kv in block['hardware_params'].items()))
    rows = []
    for joint in block['joints']:
        initial = {s['name']: s['initial_value'] for s in joint['state']}
        rows.append((joint['name'],
                     ', '.join(_interface(c, c['name'] in SIMULATED_INTERFACES)
                               for c in joint['command']) or '-',
                     ', '.join(_interface(s, s['name'] in SIMULATED_INTERFACES)
                               for s in joint['state']) or '-',
                     *('-' if initial.get(k) is None else '%g' % initial[k]
                       for k in ('position', 'velocity'))))
    _table(w, ('joint', 'command interfaces', 'state interfaces', 'initial position',
               'initial velocity'), rows)
    for kind in ('sensors', 'gpios'):
        for comp in block[kind]:
            w('  %s %r (read, not simulated): command %s; state %s\n'
              % (kind[:-1], comp['name'],
                 ', '.join(_interface(c) for c in comp['command']) or '-',
                 ', '.join(_interface(c) for c in comp['state']) or '-'))


def _table(w, header, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for row in [header] + list(rows):
        w('  ' + '  '.join(str(x).ljust(n) for x, n in zip(row, widths)).rstrip() + '\n')


def run(args):
    facts = describe(resolve_model(args.model, args.floating_base))
    if args.json:
        json.dump(facts, sys.stdout, indent=1, allow_nan=True)
        sys.stdout.write('\n')
    else:
        print_description(facts)
    return 0
