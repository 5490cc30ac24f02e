"""Bounded readers for files ros_vi may be handed by anyone: YAML text and npz archives.

Every YAML file ros_vi reads (obstacle files, sweep specs, the demos' parameter files) goes
through :func:`load_yaml` / :func:`parse_yaml`, every npz archive (recordings, sweep chunks and
results) through :func:`load_npz`.  What they refuse, each with a ValueError that names the
file and the limit (docs/architecture.md, "Limits"):

* YAML: a text longer than :data:`MAX_YAML_BYTES`; a document that, with its aliases
  (``*name``) expanded, has more than :data:`MAX_YAML_NODES` nodes (an "alias bomb": a few
  hundred bytes that expand to billions of nodes), or an alias of a node inside itself;
  nesting deeper than :data:`MAX_YAML_DEPTH`; a key given twice in one mapping (YAML would
  silently keep the last one).  Merge keys (``<<: *defaults``) are allowed.
* npz: a member that is not an ``.npy`` array, or that declares more data than it holds (a
  damaged or forged header); arrays of more than :data:`MAX_ARRAY_BYTES` in all; a
  compressed member that expands more than :data:`MAX_EXPANSION` times (a "zip bomb");
  anything zipfile or numpy cannot read (cut short, bad CRC, pickled objects).
"""
import math
import os
import zipfile
import zlib

import numpy as np
import yaml

from .errors import shorten

__all__ = ['load_yaml', 'parse_yaml', 'load_npz', 'MAX_YAML_BYTES', 'MAX_YAML_NODES',
           'MAX_YAML_DEPTH', 'MAX_ARRAY_BYTES', 'MAX_EXPANSION', 'check_expansion']

#: bytes of YAML text read (specs and obstacle files are a few kB)
MAX_YAML_BYTES = 1 << 20
#: nodes of a YAML document with its aliases expanded
MAX_YAML_NODES = 1_000_000
#: levels of nested sequences and mappings in a YAML document
MAX_YAML_DEPTH = 64
#: bytes of array data an npz archive (or an MCAP's chunks) may hold in all, decompressed
MAX_ARRAY_BYTES = 4 << 30
#: times its compressed size a compressed member or chunk may expand to
MAX_EXPANSION = 200

_MERGE = 'tag:yaml.org,2002:merge'


class _Refused(yaml.YAMLError):
    """A YAML document over one of the limits (the message says which)."""


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader counting the nodes of the document with its aliases expanded,
    its nesting depth, and refusing duplicate keys."""

    def __init__(self, stream):
        super().__init__(stream)
        self._nodes = 0              # nodes composed so far, aliases counted expanded
        self._depth = 0
        self._weight = {}            # anchor -> nodes of the anchored node, expanded

    def _count(self, nodes, mark):
        self._nodes += nodes
        if self._nodes > MAX_YAML_NODES:
            raise _Refused('%s: the document has more than %s nodes with its aliases '
                           'expanded (limit MAX_YAML_NODES)'
                           % (_line(mark), format(MAX_YAML_NODES, ',')))

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in self.anchors and event.anchor not in self._weight:
                raise _Refused('%s: alias *%s inside the node it names (a recursive '
                               'document)' % (_line(event.start_mark), event.anchor))
            node = super().compose_node(parent, index)      # an unknown anchor: its error
            self._count(self._weight[event.anchor], event.start_mark)
            return node
        self._depth += 1
        if self._depth > MAX_YAML_DEPTH:
            raise _Refused('%s: nested more than %d levels deep (limit MAX_YAML_DEPTH)'
                           % (_line(event.start_mark), MAX_YAML_DEPTH))
        before = self._nodes
        node = super().compose_node(parent, index)
        self._depth -= 1
        self._count(1, event.start_mark)
        if event.anchor is not None:
            self._weight[event.anchor] = self._nodes - before
        return node

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE:
                    continue
                key = self.construct_object(key_node, deep=True)
                if key in seen:
                    raise _Refused('%s: key %s is given twice in one mapping (first at line '
                                   '%d)' % (_line(key_node.start_mark), shorten(key),
                                            seen[key].line + 1))
                seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep)


def _line(mark):
    return 'line %d' % (mark.line + 1) if mark is not None else 'the document'


def parse_yaml(text, where, invalid='is not valid YAML'):
    """The document in YAML ``text`` (str) through the bounded loader (module doc).
    ValueError starting with ``where`` (e.g. ``"obstacle file 'x.yaml'"``): ``where
    invalid: reason`` for text that is not YAML, ``where: reason`` for a refusal."""
    if len(text) > MAX_YAML_BYTES:
        raise ValueError('%s: %s characters of YAML, more than the limit of %s '
                         '(MAX_YAML_BYTES)' % (where, format(len(text), ','),
                                               format(MAX_YAML_BYTES, ',')))
    try:
        return yaml.load(text, Loader=_BoundedLoader)
    except _Refused as err:
        raise ValueError('%s: %s' % (where, err)) from None
    except yaml.YAMLError as err:
        raise ValueError('%s %s: %s' % (where, invalid, _syntax(err))) from None
    except RecursionError:        # pragma: no cover - MAX_YAML_DEPTH stops it first
        raise ValueError('%s: nested too deeply' % where) from None


def _syntax(err):
    """PyYAML's complaint in one line: what, and where in the text."""
    if isinstance(err, yaml.MarkedYAMLError):
        mark = err.problem_mark or err.context_mark
        what = ' '.join(x for x in (err.context, err.problem) if x)
        if mark is not None:
            return '%s (line %d, column %d)' % (what, mark.line + 1, mark.column + 1)
        return what
    return _one_line(err)


def _one_line(err):
    return ' '.join(str(err).split())


def load_yaml(path, where, invalid='is not valid YAML'):
    """The document of the YAML file ``path`` through the bounded loader (module doc):
    :func:`parse_yaml` of its text, read up to :data:`MAX_YAML_BYTES`.  OSError
    (FileNotFoundError, ...) when it cannot be read; ValueError starting with ``where``
    for a file that is too large, not UTF-8 or refused."""
    with open(os.fspath(path), 'rb') as fh:
        data = fh.read(MAX_YAML_BYTES + 1)
    if len(data) > MAX_YAML_BYTES:
        raise ValueError('%s: more than %s bytes of YAML (limit MAX_YAML_BYTES)'
                         % (where, format(MAX_YAML_BYTES, ',')))
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as err:
        raise ValueError('%s is not UTF-8 text (byte %d)' % (where, err.start)) from None
    return parse_yaml(text, where, invalid)


# ------------------------------------------------------------------------------- npz
def check_expansion(compressed, expanded, what):
    """ValueError naming ``what`` when ``expanded`` bytes come from ``compressed`` bytes at
    more than :data:`MAX_EXPANSION` times (below 1 MiB anything goes)."""
    if expanded > (1 << 20) and expanded > MAX_EXPANSION * max(compressed, 1):
        raise ValueError('%s expands %s bytes to %s, more than %d times (limit '
                         'MAX_EXPANSION): refused as a decompression bomb'
                         % (what, format(compressed, ','), format(expanded, ','),
                            MAX_EXPANSION))


def _declared_bytes(zf, info):
    """Bytes of array data the ``.npy`` header of member ``info`` declares (ValueError when
    it is not a readable header)."""
    fmt = np.lib.format
    with zf.open(info) as fh:
        version = fmt.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = fmt.read_array_header_1_0(fh)
        elif version in ((2, 0), (3, 0)):
            shape, _, dtype = fmt.read_array_header_2_0(fh)
        else:       # pragma: no cover - read_magic refuses other versions
            raise ValueError('unknown .npy version %s' % (version,))
        header = fh.tell()
    if dtype.hasobject:
        raise ValueError('holds Python objects (pickled), which are not read')
    count = math.prod(int(n) for n in shape)
    return count * dtype.itemsize, header


def load_npz(path, where, max_bytes=MAX_ARRAY_BYTES):
    """``{name: array}`` of every array in the npz archive ``path``, read in full after its
    headers are checked (module doc).  ValueError ``"<where>: <reason>"`` (the reason
    alone when ``where`` is '') for anything that is not a whole, bounded npz archive
    (FileNotFoundError, OSError for a file that cannot be opened)."""
    path = os.fspath(path)
    try:
        with zipfile.ZipFile(path) as zf:
            total = 0
            for info in zf.infolist():
                what = 'array %s' % shorten(info.filename[:-4] if info.filename.endswith(
                    '.npy') else info.filename)
                if not info.filename.endswith('.npy'):
                    raise ValueError('%s is not a .npy array' % what)
                if info.compress_type != zipfile.ZIP_STORED:
                    check_expansion(info.compress_size, info.file_size, what)
                total += info.file_size
                if total > max_bytes:
                    raise ValueError('its arrays hold more than %s bytes (limit %s)'
                                     % (format(max_bytes, ','), 'MAX_ARRAY_BYTES'))
                try:
                    declared, header = _declared_bytes(zf, info)
                except ValueError as err:
                    raise ValueError('%s: %s' % (what, _one_line(err))) from None
                if header + declared > info.file_size:
                    raise ValueError('%s declares %s bytes of data but holds %s (cut short '
                                     'or damaged)' % (what, format(declared, ','),
                                                      format(info.file_size - header, ',')))
            with np.load(path, allow_pickle=False) as z:
                return {name: z[name] for name in z.files}
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, KeyError,
            NotImplementedError) as err:
        reason = _one_line(err) or type(err).__name__
        if isinstance(err, zipfile.BadZipFile) and 'not a zip file' in reason.lower():
            reason = 'not an npz archive (no zip directory: a different file, or cut short)'
        raise ValueError('%s: %s' % (where, reason) if where else reason) from None
