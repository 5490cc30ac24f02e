"""The bounded readers of files ros_vi may be handed by anyone (ros_vi.bounded: YAML, npz)
and the error texts of bounded length (ros_vi.errors)."""
import io
import zipfile

import numpy as np
import pytest

from ros_vi.bounded import (MAX_EXPANSION, MAX_YAML_BYTES, MAX_YAML_DEPTH, load_npz,
                            load_yaml, parse_yaml)
from ros_vi.errors import MAX_NAMES, name_list, shorten


# ------------------------------------------------------------------------------ YAML
def test_plain_yaml_and_merge_keys_load_as_pyyaml_loads_them():
    text = ('defaults: &d {dt: 0.01, duration: 2}\n'
            'run:\n  <<: *d\n  duration: 5\n'
            'list: [1, 2.5, "x", null, true]\n')
    assert parse_yaml(text, 'f') == {'defaults': {'dt': 0.01, 'duration': 2},
                                     'run': {'dt': 0.01, 'duration': 5},
                                     'list': [1, 2.5, 'x', None, True]}


@pytest.mark.parametrize('text, message', [
    ('grid: {a: 1}\ngrid: {b: 2}\n', r"f: line 2: key 'grid' is given twice in one mapping "
                                     r"\(first at line 1\)"),
    ('a: {x: 1, y: 2, x: 3}\n', r"f: line 1: key 'x' is given twice"),
    ('a: &x [1, *x]\n', r'f: line 1: alias \*x inside the node it names'),
    ('[' * (MAX_YAML_DEPTH + 1) + ']' * (MAX_YAML_DEPTH + 1), r'nested more than 64 levels '
                                                               r'deep \(limit MAX_YAML_DEPTH\)'),
    ('a: *nowhere\n', r"f is not valid YAML: found undefined alias 'nowhere' \(line 1, "
                      r"column 4\)"),
])
def test_refusals_name_the_line_and_the_limit(text, message):
    with pytest.raises(ValueError, match=message):
        parse_yaml(text, 'f')


def test_an_alias_bomb_is_refused_once_its_expansion_passes_the_limit(tmp_path):
    lines = ['a0: &a0 [%s]' % ', '.join(['x'] * 10)]
    lines += ['a%d: &a%d [%s]' % (k, k, ', '.join(['*a%d' % (k - 1)] * 10))
              for k in range(1, 7)]          # 10**7 strings expanded
    with pytest.raises(ValueError, match=r'more than 1,000,000 nodes with its aliases '
                                         r'expanded \(limit MAX_YAML_NODES\)'):
        parse_yaml('\n'.join(lines), 'f')
    # below the limit, aliases are fine (and are the same objects, as PyYAML makes them)
    doc = parse_yaml('\n'.join(lines[:4]), 'f')
    assert len(doc['a3']) == 10 and doc['a3'][0] is doc['a2']


def test_a_file_larger_than_the_limit_is_not_read_past_it(tmp_path):
    path = tmp_path / 'big.yaml'
    path.write_text('# ' + 'x' * MAX_YAML_BYTES + '\n')
    with pytest.raises(ValueError, match=r"big: more than 1,048,576 bytes of YAML "
                                         r"\(limit MAX_YAML_BYTES\)"):
        load_yaml(path, 'big')
    path.write_bytes(b'a: \xff\n')
    with pytest.raises(ValueError, match=r'big is not UTF-8 text \(byte 3\)'):
        load_yaml(path, 'big')
    with pytest.raises(FileNotFoundError):
        load_yaml(tmp_path / 'none.yaml', 'none')


# ------------------------------------------------------------------------------- npz
def test_an_npz_reads_whole_and_its_damage_is_named(tmp_path):
    good = tmp_path / 'good.npz'
    np.savez(good, t=np.arange(5.0), name=np.array('x'))
    arrays = load_npz(good, 'archive')
    assert arrays['t'].tolist() == [0, 1, 2, 3, 4] and str(arrays['name']) == 'x'
    data = good.read_bytes()
    cut = tmp_path / 'cut.npz'
    cut.write_bytes(data[:len(data) // 2])
    with pytest.raises(ValueError, match=r'^archive: not an npz archive'):
        load_npz(cut, 'archive')
    other = tmp_path / 'other.npz'
    with zipfile.ZipFile(other, 'w') as zf:
        zf.writestr('notes.txt', 'hello')
    with pytest.raises(ValueError, match=r"array 'notes.txt' is not a .npy array"):
        load_npz(other, 'archive')
    objects = tmp_path / 'objects.npz'
    np.savez(objects, o=np.array([{'a': 1}], dtype=object))
    with pytest.raises(ValueError, match=r"array 'o': holds Python objects"):
        load_npz(objects, 'archive')


def test_an_npz_header_declaring_more_than_it_holds_is_refused_before_reading(tmp_path):
    """A header may declare any shape: read as it says, 10**12 floats would be allocated."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {'descr': '<f8', 'fortran_order': False,
                                               'shape': (10 ** 12,)})
    buf.write(np.zeros(4).tobytes())
    path = tmp_path / 'forged.npz'
    with zipfile.ZipFile(path, 'w') as zf:
        zf.writestr('t.npy', buf.getvalue())
    with pytest.raises(ValueError, match=r"array 't' declares 8,000,000,000,000 bytes of "
                                         r"data but holds 32 \(cut short or damaged\)"):
        load_npz(path, 'f')


def test_a_zip_bomb_npz_is_refused_from_its_directory(tmp_path):
    """32 MB of zeros compress about 1000 times: refused beyond MAX_EXPANSION, unread."""
    path = tmp_path / 'bomb.npz'
    np.savez_compressed(path, zeros=np.zeros(4_000_000))
    assert path.stat().st_size * MAX_EXPANSION < 32_000_000
    with pytest.raises(ValueError, match=r"array 'zeros' expands [\d,]+ bytes to "
                                         r"32,000,128, more than 200 times"):
        load_npz(path, 'f')
    np.savez(tmp_path / 'plain.npz', zeros=np.zeros(100))
    with pytest.raises(ValueError, match=r'its arrays hold more than 100 bytes'):
        load_npz(tmp_path / 'plain.npz', 'f', max_bytes=100)


# ------------------------------------------------------------------------ error texts
def test_name_lists_and_quoted_values_are_bounded():
    names = ['joint_%d' % i for i in range(100_000)]
    text = name_list(names)
    assert text.startswith("'joint_0', 'joint_1'") and text.endswith('and 99,980 more')
    assert text.count("'joint_") == MAX_NAMES and len(text) < 400
    assert name_list(['a', 'b'], quote=str) == 'a, b' and name_list([]) == 'none'
    assert shorten(list(range(10 ** 6))).endswith('...') and len(shorten(range(3))) < 20
    assert len(shorten({'k': ['v' * 10 ** 6] * 10 ** 3})) <= 200
    nested = []
    for _ in range(10_000):
        nested = [nested]
    assert shorten(nested) == '[[[[[[[[...]]]]]]]]'
    assert shorten('x' * 5000, limit=10, quote=False) == 'xxxxxxxxx... (5,000 characters)'
