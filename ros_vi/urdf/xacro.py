"""xacro -> URDF text (the one place that runs xacro).

A ``.xacro`` file is refused before xacro sees it when it declares a DOCTYPE or entities
(xacro's parser would expand them, reading other files); xacro may include other xacro
files by design.  The text xacro produces is parsed by the hardened parser like any URDF.
"""
import contextlib
import io
import os

from .errors import URDFError, URDFSecurityError

__all__ = ['xacro_to_urdf']


def xacro_to_urdf(filename, args=None):
    """URDF XML text (str) of the ``.xacro`` file ``filename`` processed by xacro.

    ``args``: ``{name: value}`` for ``<xacro:arg>`` (values are passed as strings).
    Raises :class:`URDFError` (missing or unreadable file, xacro errors: the message has
    xacro's) or :class:`URDFSecurityError` (DOCTYPE/ENTITY declarations).
    """
    filename = os.fspath(filename)
    if not os.path.isfile(filename):
        raise URDFError('xacro file %r: no such file' % filename)
    try:
        with open(filename, 'rb') as fh:
            raw = fh.read()
    except OSError as err:
        raise URDFError('xacro file %r: cannot read: %s' % (filename, err)) from None
    if b'<!DOCTYPE' in raw or b'<!ENTITY' in raw:
        raise URDFSecurityError('xacro file %r: DOCTYPE/ENTITY declarations are not '
                                'allowed (entity expansion and external entities are '
                                'refused)' % filename)
    try:
        import xacro
    except ImportError as err:    # pragma: no cover - dependency missing
        raise ImportError('.xacro files need xacro (pip install xacro): %s' % err)
    mappings = {str(k): str(v) for k, v in (args or {}).items()}
    buf = io.StringIO()
    try:
        with contextlib.redirect_stderr(buf):
            doc = xacro.process_file(filename, mappings=mappings)
        return doc.toxml()
    except SystemExit:
        raise URDFError('xacro %r failed: %s' % (filename, buf.getvalue().strip())) from None
    except Exception as err:      # xacro raises XacroException, expat errors, NameError, ...
        msg = str(err) or type(err).__name__
        extra = buf.getvalue().strip()
        raise URDFError('xacro %r: %s%s' % (filename, msg, (' (%s)' % extra) if extra else '')
                        ) from None
