"""tf.strings.ngrams on RaggedTensor rows, against a Python reference of TF's definition."""
import pytest

import tensorweave as tf

ROWS = [["a", "b", "c", "d"], [], ["e"], ["f", "g"]]


def reference(rows, widths, separator=" ", pad=None, padding_width=None, preserve=False):
    out = []
    for row in rows:
        grams = []
        for width in widths:
            padded = list(row)
            if pad is not None:
                count = width - 1 if padding_width is None else padding_width
                padded = [pad[0]] * count + padded + [pad[1]] * count
            made = [separator.join(padded[k:k + width])
                    for k in range(len(padded) - width + 1)]
            if preserve and not made and padded:
                made = [separator.join(padded)]
            grams += made
        out.append([g.encode() for g in grams])
    return out


@pytest.mark.parametrize("kwargs", [
    {"widths": [2]}, {"widths": [1, 3]}, {"widths": [3], "pad": ("<", ">")},
    {"widths": [2], "pad": ("<", ">"), "padding_width": 1}, {"widths": [3], "preserve": True},
    {"widths": [2, 5], "separator": "|", "preserve": True}])
def test_ragged_ngrams_match_python(kwargs):
    widths = kwargs["widths"]
    got = tf.strings.ngrams(tf.ragged.constant(ROWS),
                            widths if len(widths) > 1 else widths[0],
                            separator=kwargs.get("separator", " "),
                            pad_values=kwargs.get("pad"),
                            padding_width=kwargs.get("padding_width"),
                            preserve_short_sequences=kwargs.get("preserve", False))
    with tf.Session() as session:
        assert session.run(got).to_list() == reference(
            ROWS, widths, kwargs.get("separator", " "), kwargs.get("pad"),
            kwargs.get("padding_width"), kwargs.get("preserve", False))


def test_nested_rows_and_errors():
    nested = tf.ragged.constant([[["a", "b", "c"]], [["d"], []]])
    with tf.Session() as session:
        got = session.run(tf.strings.ngrams(nested, 2)).to_list()
    assert got == [[[b"a b", b"b c"]], [[], []]]
    with pytest.raises(ValueError, match="must be positive"):
        tf.strings.ngrams(tf.ragged.constant(ROWS), 0)
    with pytest.raises(TypeError, match="must hold strings"):
        tf.strings.ngrams(tf.ragged.constant([[1]]), 2)
