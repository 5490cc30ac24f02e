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

from .models import import_model, resolve_model

HELP = 'links, joints, limits, masses and importer warnings of a model'


def add_arguments(parser):
    parser.add_argument('model', metavar='MODEL',
                        help='a URDF or xacro file, or a shipped model name')
    parser.add_argument('--json', action='store_true',
                        help='print the description as JSON (for scripts)')


def describe(source):
    """The facts ``ros-vi info`` prints, as a dict of plain values (SI units)."""
    from ..urdf.parse import parse_xml, read_description
    system, quirks = import_model(source)
    robot = system.urdf
    description = read_description(parse_xml(source.text, source.path), source.path)
    actuated = dict(zip(robot.input_joint_names, robot.input_effort_limits))
    joints = []
    for j in description.joints:
        info = robot.joint(j.name)
        if info.mimic is not None:
            role = 'mimic of %s (x %g %+g)' % info.mimic
        elif info.config is None:
            role = 'fixed'
        elif info.config.kinematic:
            role = 'kinematic (moves no mass; held)'
        else:
            role = 'dynamic'
        interfaces = ['effort'] if actuated.get(j.name, 0.0) != 0.0 else []
        joints.append({
            'name': j.name, 'type': j.type, 'parent': j.parent, 'child': j.child,
            'axis': [float(a) for a in info.axis] if info.moving else None,
            'lower': float(info.lower), 'upper': float(info.upper),
            'effort': float(info.effort), 'velocity': float(info.velocity),
            'damping': float(info.damping), 'friction': float(info.friction),
            'role': role, 'command_interfaces': interfaces})
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
        'links': links, 'joints': joints, 'warnings': quirks}


def _fmt(x):
    return '-' if not math.isfinite(x) else '%g' % x


def _tree_lines(facts):
    children = {}
    for j in facts['joints']:
        children.setdefault(j['parent'], []).append(j)
    lines = [facts['root_link']]

    def walk(link, indent):
        kids = children.get(link, [])
        for i, j in enumerate(kids):
            last = i == len(kids) - 1
            lines.append('%s%s %s [%s] -> %s' % (indent, '└─' if last else '├─', j['name'],
                                                 j['type'], j['child']))
            walk(j['child'], indent + ('   ' if last else '│  '))
    walk(facts['root_link'], '')
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
             ','.join(j['command_interfaces']) or '-', j['role']) for j in moving]
    _table(w, header, rows)
    w('\nlinks (mass kg, COM m in the link frame, inertia kg m^2 about the COM):\n')
    rows = [(l['name'], '%g' % l['mass'], ' '.join('%g' % c for c in l['com']),
             ' '.join('%g' % l['inertia'][a][b] for a, b in
                      ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))))
            for l in facts['links']]
    _table(w, ('link', 'mass', 'com xyz', 'ixx iyy izz ixy ixz iyz'), rows)
    w('\nimporter warnings: %s\n' % ('none' if not facts['warnings'] else ''))
    for q in facts['warnings']:
        w('  - %s\n' % q)


def _table(w, header, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for row in [header] + list(rows):
        w('  ' + '  '.join(str(x).ljust(n) for x, n in zip(row, widths)).rstrip() + '\n')


def run(args):
    facts = describe(resolve_model(args.model))
    if args.json:
        json.dump(facts, sys.stdout, indent=1, allow_nan=True)
        sys.stdout.write('\n')
    else:
        print_description(facts)
    return 0
