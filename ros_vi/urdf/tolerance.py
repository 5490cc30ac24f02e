"""The tolerance policy of the importer (docs/urdf-import.md): what urdfdom and
robot_state_publisher accept is imported; each quirk that needed tolerating is recorded as a
:class:`Quirk` (on ``system.urdf.warnings``) and emitted once as a :class:`URDFWarning`;
``strict=True`` turns the first quirk into a :class:`URDFError`.
"""
import logging
import warnings

from .errors import URDFError

__all__ = ['Quirk', 'URDFWarning', 'Tolerance']

_log = logging.getLogger('ros_vi.urdf')


class URDFWarning(UserWarning):
    """Warning category of a tolerated URDF quirk (the message is ``str(quirk)``)."""


class Quirk:
    """One tolerated quirk of a robot description (immutable).

    ``element``: ``'link'``, ``'joint'``, ``'transmission'``, ``'material'``,
    ``'ros2_control'`` or ``'robot'``; ``name``: the URDF name of that element; ``problem``: what is wrong with it;
    ``action``: what the importer did about it.  ``str(quirk)`` reads
    ``"joint 'k': mimics the missing joint 'nope'; ignored the mimic: 'k' moves freely"``.
    """
    __slots__ = ('element', 'name', 'problem', 'action')

    def __init__(self, element, name, problem, action):
        for attr, value in zip(self.__slots__, (element, name, problem, action)):
            object.__setattr__(self, attr, value)

    def __setattr__(self, attr, value):
        raise AttributeError('Quirk is immutable')

    def __eq__(self, other):
        return isinstance(other, Quirk) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def _key(self):
        return (self.element, self.name, self.problem, self.action)

    def __str__(self):
        return '%s %r: %s; %s' % (self.element, self.name, self.problem, self.action)

    def __repr__(self):
        return 'Quirk(%r, %r, %r, %r)' % self._key()


class Tolerance:
    """Collects the quirks of one import (``strict``: the first one raises)."""

    def __init__(self, where, strict=False):
        self.where = where
        self.strict = bool(strict)
        self.quirks = []

    def tolerate(self, element, name, problem, action, asked=False):
        """Record a quirk (``asked``: a conversion the caller asked for, never fatal)."""
        quirk = Quirk(element, name, problem, action)
        if self.strict and not asked:
            raise URDFError('%s: %s %r: %s (refused: strict import; without strict the '
                            'importer %s)' % (self.where, element, name, problem,
                                              _infinitive(action)))
        if quirk not in self.quirks:
            self.quirks.append(quirk)
        return quirk

    def emit(self, stacklevel=4):
        """Each quirk once through :mod:`warnings` (category :class:`URDFWarning`)."""
        for quirk in self.quirks:
            warnings.warn('%s: %s' % (self.where, quirk), URDFWarning, stacklevel=stacklevel)


def _infinitive(action):
    """'ignored it' -> 'would have ignored it' (for the strict error message)."""
    return 'would have ' + action
