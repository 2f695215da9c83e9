"""tf.strings.unicode_* and the ragged string splits, against Python's own Unicode handling."""
import numpy as np
import pytest

import tensorweave as tf

COVERED_OP_TYPES = {"UnicodeDecode", "UnicodeDecodeWithOffsets", "UnicodeEncode",
                    "UnicodeScript"}
CODECS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}
TEXTS = ["héllo", "", "中文 text", "emoji \U0001F600!", "\u0410\u0411\u0412", "a\u0301"]


def run(fetches, feed_dict=None):
    with tf.Session() as session:
        return session.run(fetches, feed_dict)


def random_texts(seed, count=8):
    rng = np.random.default_rng(seed)
    pools = [range(0x20, 0x7F), range(0xA0, 0x800), range(0x4E00, 0x4E80),
             range(0x1F300, 0x1F340)]
    texts = []
    for _ in range(count):
        pool = pools[int(rng.integers(len(pools)))]
        texts.append("".join(chr(int(rng.choice(pool))) for _ in range(int(rng.integers(0, 7)))))
    return texts


@pytest.mark.parametrize("encoding", sorted(CODECS))
def test_decode_and_encode_round_trip_with_python(encoding):
    texts = TEXTS + random_texts(len(encoding))
    data = [t.encode(CODECS[encoding]) for t in texts]
    codes, starts = tf.strings.unicode_decode_with_offsets(data, encoding)
    got_codes, got_starts = run([codes, starts])
    assert got_codes.to_list() == [[ord(c) for c in t] for t in texts]
    expected_starts = [[len(t[:k].encode(CODECS[encoding])) for k in range(len(t))]
                       for t in texts]
    assert got_starts.to_list() == expected_starts
    encoded = run(tf.strings.unicode_encode(codes, encoding))
    assert encoded.tolist() == data
    plain = run(tf.strings.unicode_decode(data, encoding))
    assert plain.to_list() == got_codes.to_list()


INVALID = [b"a\xffb", b"\xe4\xb8", b"\xc3\x28", b"\xed\xa0\x80x", b"ok\x80\x80", b"\xf0\x9f\x98"]


@pytest.mark.parametrize("errors", ["replace", "ignore"])
def test_invalid_utf8_follows_pythons_decoder(errors):
    got = run(tf.strings.unicode_decode(INVALID, "UTF-8", errors=errors, replacement_char=0x3F))
    expected = [[ord(c) for c in d.decode("utf-8", errors=errors).replace("\ufffd", "?")]
                for d in INVALID]
    assert got.to_list() == expected


def test_strict_errors_and_bad_arguments():
    with pytest.raises(tf.errors.InvalidArgumentError, match="invalid utf-8 at byte 1"):
        run(tf.strings.unicode_decode([b"a\xff"], "UTF-8", errors="strict"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a Unicode code point"):
        run(tf.strings.unicode_encode(tf.ragged.constant([[0xD800]]), "UTF-8", errors="strict"))
    with pytest.raises(ValueError, match="encoding must be one of"):
        tf.strings.unicode_decode(["a"], "latin-1")
    with pytest.raises(ValueError, match="errors must be one of"):
        tf.strings.unicode_decode(["a"], "UTF-8", errors="bogus")
    with pytest.raises(TypeError, match="expected a string tensor"):
        tf.strings.unicode_decode(tf.constant([1, 2]), "UTF-8")


def test_utf16_odd_byte_and_replace_control_characters():
    got = run(tf.strings.unicode_decode([b"\x00a\x00", b"a\x01\tb"], "UTF-16-BE"))
    assert got.to_list()[0] == [ord(c) for c in b"\x00a\x00".decode("utf-16-be", "replace")]
    controls = run(tf.strings.unicode_decode(["a\x01\tb"], "UTF-8",
                                             replace_control_characters=True))
    assert controls.to_list() == [[97, 0xFFFD, 0xFFFD, 98]]


def test_encode_replaces_or_drops_invalid_code_points():
    codes = tf.ragged.constant([[104, -1, 105, 0x110000, 0xDC00]])
    assert run(tf.strings.unicode_encode(codes, "UTF-8")).tolist() == \
        ["h\ufffdi\ufffd\ufffd".encode()]
    assert run(tf.strings.unicode_encode(codes, "UTF-8", errors="ignore")).tolist() == [b"hi"]
    assert run(tf.strings.unicode_encode(codes, "UTF-8", replacement_char=ord("*"))).tolist() \
        == [b"h*i**"]


def test_shapes_follow_the_input():
    scalar = run(tf.strings.unicode_decode("ab", "UTF-8"))
    np.testing.assert_array_equal(scalar, [97, 98])
    matrix = tf.strings.unicode_decode([["a", "bc"], ["", "d"]], "UTF-8")
    assert matrix.ragged_rank == 2
    assert run(matrix).to_list() == [[[97], [98, 99]], [[], [100]]]
    ragged = tf.strings.unicode_decode(tf.ragged.constant([["ab"], [], ["c", "d"]]), "UTF-8")
    assert run(ragged).to_list() == [[[97, 98]], [], [[99], [100]]]
    dense_codes = run(tf.strings.unicode_encode([[[104, 105]], [[106, 107]]], "UTF-8"))
    assert dense_codes.tolist() == [[b"hi"], [b"jk"]]
    nested = run(tf.strings.unicode_encode(tf.ragged.constant([[[104], []], [[105, 106]]]),
                                           "UTF-8"))
    assert nested.to_list() == [[b"h", b""], [b"ij"]]


def test_unicode_split_matches_python_characters():
    texts = TEXTS + random_texts(3)
    chars, starts = tf.strings.unicode_split_with_offsets(texts, "UTF-8")
    got_chars, got_starts = run([chars, starts])
    assert got_chars.to_list() == [[c.encode() for c in t] for t in texts]
    assert got_starts.to_list() == [[len(t[:k].encode()) for k in range(len(t))] for t in texts]
    utf16 = run(tf.strings.unicode_split([t.encode("utf-16-be") for t in texts], "UTF-16-BE"))
    assert utf16.to_list() == [[c.encode("utf-16-be") for c in t] for t in texts]
    assert run(tf.strings.unicode_split([b"a\xff"], "UTF-8")).to_list() == [[b"a",
                                                                              "\ufffd".encode()]]


def test_unicode_script_gives_icu_codes():
    # ICU's UScriptCode numbers: Common 0, Inherited 1, Arabic 2, Cyrillic 8, Greek 14, Han 17,
    # Hiragana 20, Latin 25, Unknown 103; -1 for a value that is no code point.
    codes = [ord("a"), 0x416, 0x3B1, 0x4E2D, 0x3042, 0x627, 0x301, ord("1"), 0xE0000, -3,
             0x110000]
    np.testing.assert_array_equal(run(tf.strings.unicode_script(codes)),
                                  [25, 8, 14, 17, 20, 2, 1, 0, 103, -1, -1])
    ragged = tf.strings.unicode_script(tf.strings.unicode_decode(["aЖ", ""], "UTF-8"))
    assert run(ragged).to_list() == [[25, 8], []]


def test_bytes_split_matches_python_bytes():
    texts = ["héllo", "", "ab"]
    got = run(tf.strings.bytes_split(texts))
    assert got.to_list() == [[bytes([b]) for b in t.encode()] for t in texts]
    assert run(tf.strings.bytes_split([["ab"], ["c"]])).to_list() == [[[b"a", b"b"]], [[b"c"]]]
    np.testing.assert_array_equal(run(tf.strings.bytes_split("xy")), [b"x", b"y"])


@pytest.mark.parametrize("sep,maxsplit", [(None, -1), (",", -1), (",", 1), ("ab", -1)])
def test_strings_split_both_result_types_match_str_split(sep, maxsplit):
    texts = ["a,b,,c", " x  y ", "", "1ab2ab3", "no-sep"]
    expected = [t.encode().split(sep.encode() if sep else None, maxsplit) for t in texts]
    ragged = run(tf.strings.split(texts, sep=sep, maxsplit=maxsplit, result_type="RaggedTensor"))
    assert ragged.to_list() == expected
    sparse = run(tf.strings.split(texts, sep=sep, maxsplit=maxsplit))
    assert isinstance(sparse, tf.SparseTensorValue)
    rows = [[] for _ in texts]
    for (row, _), value in zip(sparse.indices.tolist(), sparse.values.tolist()):
        rows[row].append(value)
    assert rows == expected
    matrix = run(tf.strings.split([texts[:2], texts[2:4]], sep=sep, maxsplit=maxsplit,
                                  result_type="RaggedTensor"))
    assert matrix.to_list() == [expected[:2], expected[2:4]]


def test_string_split_v1_ragged_and_errors():
    got = run(tf.string_split(["a b", "", "c"], result_type="RaggedTensor"))
    assert got.to_list() == [[b"a", b"b"], [], [b"c"]]
    sparse = run(tf.string_split(["a-b"], delimiter="-"))
    assert sparse.values.tolist() == [b"a", b"b"]
    with pytest.raises(ValueError, match="result_type"):
        tf.strings.split(["a"], result_type="Tensor")
    with pytest.raises(ValueError, match="exactly one of input and source"):
        tf.strings.split()
