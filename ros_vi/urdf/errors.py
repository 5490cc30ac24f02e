"""Errors of the URDF importer (all ValueErrors; the message names the culprit element)."""

__all__ = ['URDFError', 'URDFParseError', 'URDFSecurityError']


class URDFError(ValueError):
    """A URDF (or xacro) that cannot be imported; the message names the culprit element."""


class URDFParseError(URDFError):
    """Malformed XML, or an element urdf_parser_py cannot read."""


class URDFSecurityError(URDFError):
    """A document that would make the parser read other files or expand entities."""

