"""Error texts of bounded length: a message names the culprit, never the whole of a hostile
input (100,000 unknown joint names, an expanded YAML document) that came with it.

:func:`name_list` lists at most :data:`MAX_NAMES` names and says how many more there are;
:func:`shorten` gives the ``repr`` of a value cut to :data:`MAX_VALUE_CHARS` characters.
This module imports nothing of ros_vi, so any module (the core included) can use it.
"""

__all__ = ['name_list', 'shorten', 'MAX_NAMES', 'MAX_VALUE_CHARS']

#: names listed in one error text; the rest are counted ("and 99,990 more")
MAX_NAMES = 20
#: characters of a value quoted in one error text
MAX_VALUE_CHARS = 200


def name_list(names, limit=MAX_NAMES, quote=repr):
    """``"'a', 'b', 'c'"``: the first ``limit`` of ``names`` (any iterable), each through
    ``quote`` (``repr``; ``str`` for names already quoted), then ``"and N more"`` when there
    are more; ``'none'`` for no names.

    >>> name_list(['j%d' % i for i in range(12)], limit=3)
    "'j0', 'j1', 'j2' and 9 more"
    """
    names = list(names)
    shown = ', '.join(quote(n) for n in names[:limit])
    if not names:
        return 'none'
    if len(names) > limit:
        return '%s and %s more' % (shown, format(len(names) - limit, ','))
    return shown


def shorten(value, limit=MAX_VALUE_CHARS, quote=True):
    """``repr(value)``, cut to ``limit`` characters (``...`` marks the cut; a string or bytes
    says its length).  Only the beginning of a large or deeply nested container is looked
    at, so a huge value costs no more than its first items.  ``quote=False``: a string as
    it is, not its repr (for a message quoted from elsewhere).

    >>> shorten('x' * 1000, limit=12)
    "'xxxxxxxxx... (1,000 characters)"
    >>> shorten('an error message', limit=8, quote=False)
    'an erro... (16 characters)'
    """
    if not quote and isinstance(value, str):
        if len(value) <= limit:
            return value
        return '%s... (%s characters)' % (value[:limit - 1], format(len(value), ','))
    text = _bounded_repr(value, limit + 1, 0)
    if len(text) <= limit:
        return text
    if isinstance(value, (str, bytes)):
        return '%s... (%s characters)' % (text[:limit - 2], format(len(value), ','))
    return text[:limit - 3] + '...'


_NESTING = 8        # container levels looked into


def _bounded_repr(value, limit, depth):
    """A prefix of ``repr(value)`` at least ``limit`` characters long when the repr is that
    long (exact below), built from the first items of large containers and the first
    :data:`_NESTING` levels of nested ones."""
    if isinstance(value, (str, bytes)):
        return repr(value[:limit + 2]) if len(value) > limit + 2 else repr(value)
    if isinstance(value, (dict, list, tuple)):
        if depth >= _NESTING:
            return '...'
        if isinstance(value, dict):
            items = ('%s: %s' % (_bounded_repr(k, limit, depth + 1),
                                 _bounded_repr(v, limit, depth + 1))
                     for k, v in value.items())
            opening, closing = '{', '}'
        else:
            items = (_bounded_repr(item, limit, depth + 1) for item in value)
            opening, closing = ('[', ']') if isinstance(value, list) else ('(', ')')
        parts, size = [], 1
        for part in items:
            if size > limit:
                return opening + ', '.join(parts) + ', ...'
            parts.append(part)
            size += len(part) + 2
        if isinstance(value, tuple) and len(parts) == 1:
            closing = ',)'
        return opening + ', '.join(parts) + closing
    return repr(value)[:limit + 1]
