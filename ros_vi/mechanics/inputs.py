"""Which config each input of a System pushes on: the one input -> config map.

An input set by a :class:`~ros_vi.mechanics.forces.ConfigForce` acts as a generalized force
on exactly one config (``F_config = u``); every user that needs "the joint of an input" --
the simulation's joint commands and published efforts, a controller's collocated
linearisation -- reads it from :func:`input_configs`.

Example
-------
>>> input_configs(system)             # (nu,) config index per input, -1: not a ConfigForce
array([0])
>>> config_efforts(system, u)         # (nQ,) generalized force of those inputs
"""
import numpy as np

from .forces import ConfigForce

__all__ = ['input_configs', 'config_efforts']


def input_configs(system):
    """(nu,) int: index of the config each input of ``system`` pushes on through a
    :class:`ConfigForce`, ``-1`` for inputs that set some other force (or none)."""
    out = np.full(system.nu, -1, dtype=int)
    for force in system.forces:
        if isinstance(force, ConfigForce):
            out[force.finput.index] = force.config.index
    return out


def config_efforts(system, u, configs=None):
    """(nQ,) generalized force that the ConfigForce inputs ``u`` (nu,) put on the configs
    (inputs of other forces contribute nothing).  ``configs``: :func:`input_configs` of
    ``system`` if already known."""
    configs = input_configs(system) if configs is None else configs
    out = np.zeros(system.nQ)
    on = configs >= 0
    np.add.at(out, configs[on], np.asarray(u, dtype=float)[on])
    return out
