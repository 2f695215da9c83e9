"""tf.TensorShape and tf.Dimension: partially known shapes and how they combine."""
import pytest

import tensorweave as tf
from tensorweave.framework import tensor_shape


def test_dimension_known_and_unknown():
    assert tf.Dimension(3).value == 3
    assert tf.Dimension(None).value is None
    assert tf.Dimension(tf.Dimension(4)).value == 4
    assert int(tf.Dimension(5)) == 5
    with pytest.raises(ValueError):
        int(tf.Dimension(None))
    with pytest.raises(ValueError):
        tf.Dimension(-2)
    assert str(tf.Dimension(None)) == "?" and str(tf.Dimension(7)) == "7"


def test_dimension_equality_is_unknown_when_either_side_is():
    assert tf.Dimension(3) == 3
    assert tf.Dimension(3) == tf.Dimension(3)
    assert (tf.Dimension(3) == tf.Dimension(4)) is False
    assert (tf.Dimension(None) == tf.Dimension(3)) is None
    assert (tf.Dimension(None) != tf.Dimension(3)) is None
    assert (tf.Dimension(3) != tf.Dimension(4)) is True
    assert (tf.Dimension(3) != 3) is False


def test_dimension_ordering_is_unknown_when_either_side_is():
    assert tf.Dimension(2) < 3 and tf.Dimension(3) <= 3
    assert tf.Dimension(4) > tf.Dimension(3) and tf.Dimension(3) >= 3
    assert (tf.Dimension(None) < 3) is None
    assert (tf.Dimension(2) > tf.Dimension(None)) is None


def test_dimension_arithmetic_propagates_unknown():
    assert (tf.Dimension(2) + 3).value == 5
    assert (3 * tf.Dimension(4)).value == 12
    assert (tf.Dimension(7) - 2).value == 5
    assert (tf.Dimension(7) // 2).value == 3
    assert (tf.Dimension(None) + 1).value is None
    assert (tf.Dimension(2) * tf.Dimension(None)).value is None


def test_dimension_merge_and_compatibility():
    assert tf.Dimension(None).merge_with(4).value == 4
    assert tf.Dimension(4).merge_with(None).value == 4
    assert tf.Dimension(4).is_compatible_with(tf.Dimension(None))
    assert not tf.Dimension(4).is_compatible_with(5)
    with pytest.raises(ValueError, match="not compatible"):
        tf.Dimension(4).merge_with(5)


def test_unknown_rank_shape():
    shape = tf.TensorShape(None)
    assert shape.ndims is None and shape.dims is None
    assert not shape.is_fully_defined()
    assert shape.num_elements() is None
    assert str(shape) == "<unknown>"
    with pytest.raises(ValueError):
        shape.as_list()
    with pytest.raises(ValueError):
        len(shape)
    with pytest.raises(ValueError):
        iter(shape)
    assert shape[0].value is None and shape[1:].ndims is None
    assert shape.is_compatible_with([1, 2, 3]) and shape.is_compatible_with(None)


def test_partially_known_shape():
    shape = tf.TensorShape([None, 3])
    assert shape.ndims == 2 and shape.rank == 2 and len(shape) == 2
    assert shape.as_list() == [None, 3]
    assert [d.value for d in shape] == [None, 3]
    assert shape[1].value == 3 and shape[0].value is None
    assert shape[1:].as_list() == [3]
    assert not shape.is_fully_defined()
    assert shape.num_elements() is None
    assert str(shape) == "(?, 3)"
    with pytest.raises(ValueError, match="not fully defined"):
        shape.assert_is_fully_defined()


def test_fully_defined_shapes_and_num_elements():
    assert tf.TensorShape([2, 3, 4]).num_elements() == 24
    assert tf.TensorShape([]).num_elements() == 1
    assert tf.TensorShape([5, 0]).num_elements() == 0
    assert tf.TensorShape([]).is_fully_defined()
    assert str(tf.TensorShape([7])) == "(7,)" and str(tf.TensorShape([])) == "()"
    assert tf.TensorShape([tf.Dimension(2), 3]).as_list() == [2, 3]
    assert tf.TensorShape(tf.TensorShape([1, 2])) == tf.TensorShape([1, 2])


def test_shape_compatibility():
    assert tf.TensorShape([None, 3]).is_compatible_with([5, 3])
    assert not tf.TensorShape([None, 3]).is_compatible_with([5, 4])
    assert not tf.TensorShape([None, 3]).is_compatible_with([None, 3, 1])
    assert tf.TensorShape([]).is_compatible_with([])
    assert not tf.TensorShape([]).is_compatible_with([1])
    tf.TensorShape([2, None]).assert_is_compatible_with([2, 7])
    with pytest.raises(ValueError, match="incompatible"):
        tf.TensorShape([2, None]).assert_is_compatible_with([3, 7])


def test_merge_with_combines_knowledge():
    merged = tf.TensorShape([None, 3, None]).merge_with([2, None, None])
    assert merged.as_list() == [2, 3, None]
    assert tf.TensorShape(None).merge_with([1, 2]).as_list() == [1, 2]
    assert tf.TensorShape([1, 2]).merge_with(None).as_list() == [1, 2]


@pytest.mark.parametrize("a,b", [([2, 3], [2, 4]), ([2, 3], [2, 3, 1]), ([], [1])])
def test_merge_with_conflict_raises_naming_both_shapes(a, b):
    with pytest.raises(ValueError) as info:
        tf.TensorShape(a).merge_with(b)
    assert str(tf.TensorShape(a)) in str(info.value)
    assert str(tf.TensorShape(b)) in str(info.value)


def test_rank_helpers():
    assert tf.TensorShape(None).with_rank(2).as_list() == [None, None]
    assert tf.TensorShape([1, 2]).with_rank(2).as_list() == [1, 2]
    with pytest.raises(ValueError):
        tf.TensorShape([1, 2]).with_rank(3)
    with pytest.raises(ValueError):
        tf.TensorShape([1]).with_rank_at_least(2)
    tf.TensorShape([1, 2, 3]).with_rank_at_least(2)
    with pytest.raises(ValueError):
        tf.TensorShape([1]).assert_has_rank(2)
    tf.TensorShape(None).assert_has_rank(5)


def test_concatenate():
    assert tf.TensorShape([1, None]).concatenate([3]).as_list() == [1, None, 3]
    assert tf.TensorShape([1]).concatenate(None).ndims is None


def test_equality_and_hash():
    assert tf.TensorShape([1, None]) == tf.TensorShape([1, None])
    assert tf.TensorShape([1, 2]) == [1, 2]
    assert tf.TensorShape([1, 2]) != tf.TensorShape([2, 1])
    assert tf.TensorShape(None) != tf.TensorShape([])
    assert len({tf.TensorShape([1, 2]), tf.TensorShape([1, 2])}) == 1


def test_module_helpers():
    assert tensor_shape.scalar().as_list() == []
    assert tensor_shape.vector(4).as_list() == [4]
    assert tensor_shape.matrix(2, None).as_list() == [2, None]
    assert tensor_shape.unknown_shape(3).as_list() == [None, None, None]
    assert tf.dimension_value(tf.Dimension(3)) == 3 and tf.dimension_value(None) is None
