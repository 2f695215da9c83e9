"""The LinearOperator family against the dense matrices they stand for, in NumPy: shape,
to_dense, matmul / matvec (with adjoint and adjoint_arg), solve / solvevec, determinant,
log |det|, diag_part, trace, adjoint(), inverse(); the hints' contradictions; gradients of a
solve and a Woodbury solve."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import gradient_checker

LA = tf.linalg
RNG = np.random.default_rng(7)


def _spd(n, batch=()):
    x = RNG.uniform(-1, 1, batch + (n, n))
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def _well(n, batch=()):
    return RNG.uniform(-1, 1, batch + (n, n)) + n * np.eye(n)


def _toeplitz(col, row):
    n = len(col)
    return np.array([[col[i - j] if i >= j else row[j - i] for j in range(n)] for i in range(n)])


def _circulant_dense(spectrum_shape):
    """A real block-circulant matrix and its spectrum: columns are shifts of one real kernel."""
    kernel = RNG.uniform(-1, 1, spectrum_shape)
    kernel.flat[0] += 4 * kernel.size ** 0.5
    spectrum = np.fft.fftn(kernel)
    size = kernel.size
    dense = np.empty((size, size))
    for j in range(size):
        unit = np.zeros(size)
        unit[j] = 1
        dense[:, j] = np.real(np.fft.ifftn(np.fft.fftn(unit.reshape(spectrum_shape)) *
                                           spectrum)).ravel()
    return spectrum, dense


def _cases():
    full, diag, tril = _well(3, (2,)), RNG.uniform(1, 2, (2, 3)), np.tril(_well(3))
    a, b, c = _well(2), _well(3), _spd(3)
    base, u, d = RNG.uniform(1, 2, 4), RNG.uniform(-1, 1, (4, 2)), RNG.uniform(1, 2, 2)
    col, row = RNG.uniform(-1, 1, 4), RNG.uniform(-1, 1, 4)
    col[0] += 4
    v, perm = RNG.uniform(-1, 1, 3), np.array([2, 0, 3, 1])
    tri = RNG.uniform(-1, 1, (3, 4))
    tri[1] += 4
    s1, c1 = _circulant_dense((4,))
    s2, c2 = _circulant_dense((2, 3))
    s3, c3 = _circulant_dense((2, 2, 2))
    blocks = [[_well(2)], [RNG.uniform(-1, 1, (3, 2)), _well(3)]]
    block_dense = np.zeros((5, 5))
    block_dense[:2, :2], block_dense[2:, :2], block_dense[2:, 2:] = blocks[0][0], *blocks[1]
    tri_dense = np.diag(tri[1]) + np.diag(tri[0, :-1], 1) + np.diag(tri[2, 1:], -1)
    full_op = lambda m: LA.LinearOperatorFullMatrix(m)  # noqa: E731
    return [
        ("full", lambda: full_op(full), full),
        ("diag", lambda: LA.LinearOperatorDiag(diag), np.stack([np.diag(x) for x in diag])),
        ("identity", lambda: LA.LinearOperatorIdentity(3, dtype=tf.float64), np.eye(3)),
        ("scaled_identity", lambda: LA.LinearOperatorScaledIdentity(3, np.array([2.0, -0.5])),
         np.array([2.0, -0.5])[:, None, None] * np.eye(3)),
        ("lower_triangular", lambda: LA.LinearOperatorLowerTriangular(tril), tril),
        ("composition", lambda: LA.LinearOperatorComposition([full_op(b), full_op(c)]), b @ c),
        ("adjoint", lambda: LA.LinearOperatorAdjoint(full_op(b)), b.T),
        ("inversion", lambda: LA.LinearOperatorInversion(full_op(b)), np.linalg.inv(b)),
        ("block_diag", lambda: LA.LinearOperatorBlockDiag([full_op(a), full_op(b)]),
         np.block([[a, np.zeros((2, 3))], [np.zeros((3, 2)), b]])),
        ("kronecker", lambda: LA.LinearOperatorKronecker([full_op(a), full_op(b)]),
         np.kron(a, b)),
        ("low_rank_update", lambda: LA.LinearOperatorLowRankUpdate(
            LA.LinearOperatorDiag(base), u, diag_update=d), np.diag(base) + u @ np.diag(d) @ u.T),
        ("toeplitz", lambda: LA.LinearOperatorToeplitz(col, row), _toeplitz(col, row)),
        ("circulant", lambda: LA.LinearOperatorCirculant(s1, input_output_dtype=tf.float64), c1),
        ("circulant2d", lambda: LA.LinearOperatorCirculant2D(s2, input_output_dtype=tf.float64),
         c2),
        ("circulant3d", lambda: LA.LinearOperatorCirculant3D(s3, input_output_dtype=tf.float64),
         c3),
        ("householder", lambda: LA.LinearOperatorHouseholder(v),
         np.eye(3) - 2 * np.outer(v, v) / v.dot(v)),
        ("permutation", lambda: LA.LinearOperatorPermutation(perm, dtype=tf.float64),
         np.eye(4)[perm]),
        ("tridiag", lambda: LA.LinearOperatorTridiag(tri), tri_dense),
        ("block_lower_triangular", lambda: LA.LinearOperatorBlockLowerTriangular(
            [[full_op(m) for m in row] for row in blocks]), block_dense),
    ]


CASES = _cases()


@pytest.mark.parametrize("name,make,dense", CASES, ids=[c[0] for c in CASES])
def test_operator_matches_its_dense_matrix(name, make, dense):
    with tf.Graph().as_default():
        op = make()
        n = op.shape.as_list()[-1]
        batch = op.shape.as_list()[:-2]
        x = RNG.uniform(-1, 1, tuple(batch) + (n, 2))
        xv = RNG.uniform(-1, 1, tuple(batch) + (n,))
        fetches = {"dense": op.to_dense(), "matmul": op.matmul(x),
                   "matmul_adj": op.matmul(np.swapaxes(x, -1, -2), adjoint=True,
                                           adjoint_arg=True),
                   "matvec": op.matvec(xv), "solve": op.solve(x),
                   "solve_adj": op.solve(x, adjoint=True), "solvevec": op.solvevec(xv),
                   "det": op.determinant(), "logdet": op.log_abs_determinant(),
                   "diag": op.diag_part(), "trace": op.trace(),
                   "adjoint_dense": op.adjoint().to_dense(),
                   "inverse_dense": op.inverse().to_dense(),
                   "shape": op.shape_tensor(), "plus": op.add_to_tensor(np.ones((n, n)))}
        with tf.Session() as session:
            got = session.run(fetches)
    np.testing.assert_allclose(got["dense"], dense, rtol=1e-9, atol=1e-9)
    assert list(got["shape"]) == list(dense.shape) == op.shape.as_list()
    assert op.batch_shape.as_list() == list(dense.shape[:-2])
    assert op.domain_dimension == dense.shape[-1] and op.range_dimension == dense.shape[-2]
    adj = np.conj(np.swapaxes(dense, -1, -2))
    check = lambda key, want: np.testing.assert_allclose(  # noqa: E731
        got[key], want, rtol=1e-8, atol=1e-9, err_msg=f"{name}.{key}")
    check("matmul", dense @ x)
    check("matmul_adj", adj @ x)
    check("matvec", np.einsum("...ij,...j->...i", dense, xv))
    check("solve", np.linalg.solve(dense, x))
    check("solve_adj", np.linalg.solve(adj, x))
    check("solvevec", np.linalg.solve(dense, xv[..., None])[..., 0])
    check("det", np.linalg.det(dense))
    check("logdet", np.linalg.slogdet(dense)[1])
    check("diag", np.diagonal(dense, axis1=-2, axis2=-1))
    check("trace", np.trace(dense, axis1=-2, axis2=-1))
    check("adjoint_dense", adj)
    check("inverse_dense", np.linalg.inv(dense))
    check("plus", dense + 1)


def test_composition_is_the_product_and_operators_compose_by_matmul():
    a, b = _well(3), _spd(3)
    with tf.Graph().as_default():
        product = LA.LinearOperatorFullMatrix(a).matmul(LA.LinearOperatorFullMatrix(b))
        assert isinstance(product, LA.LinearOperatorComposition)
        with tf.Session() as session:
            dense = session.run(product.to_dense())
    np.testing.assert_allclose(dense, a @ b, rtol=1e-12)


def test_zeros_identity_and_cholesky():
    spd = _spd(3)
    with tf.Graph().as_default():
        zeros = LA.LinearOperatorZeros(2, 3, batch_shape=[2], dtype=tf.float64)
        spd_op = LA.LinearOperatorFullMatrix(spd, is_self_adjoint=True, is_positive_definite=True)
        diag = LA.LinearOperatorDiag([4.0, 9.0], is_positive_definite=True)
        with tf.Session() as session:
            z, zm, factor, root, eye_x = session.run([
                zeros.to_dense(), zeros.matmul(np.ones((2, 3, 4))), spd_op.cholesky().to_dense(),
                diag.cholesky().to_dense(),
                LA.LinearOperatorIdentity(2, batch_shape=[3]).matmul(np.ones((2, 1), np.float32))])
    assert z.shape == (2, 2, 3) and not z.any() and zm.shape == (2, 2, 4) and not zm.any()
    np.testing.assert_allclose(factor, np.linalg.cholesky(spd), rtol=1e-10)
    np.testing.assert_allclose(root, np.diag([2.0, 3.0]))
    assert eye_x.shape == (3, 2, 1) and (eye_x == 1).all()
    with pytest.raises(NotImplementedError, match="singular"):
        zeros_square = LA.LinearOperatorZeros(2)
        zeros_square.solve(np.ones((2, 1), np.float32))


def test_hints_that_contradict_raise():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="positive definite"):
            LA.LinearOperatorFullMatrix(np.eye(2), is_positive_definite=True,
                                        is_non_singular=False)
        with pytest.raises(ValueError, match="is_square=True"):
            LA.LinearOperatorFullMatrix(np.ones((2, 3)), is_square=True)
        rect = LA.LinearOperatorFullMatrix(np.ones((2, 3)))
        with pytest.raises(NotImplementedError, match="square"):
            rect.determinant()
        singular = LA.LinearOperatorFullMatrix(np.eye(2), is_non_singular=False)
        with pytest.raises(NotImplementedError, match="singular"):
            singular.solve(np.ones((2, 1)))
        with pytest.raises(ValueError, match="singular"):
            singular.inverse()
        with pytest.raises(ValueError, match="cholesky"):
            LA.LinearOperatorFullMatrix(np.eye(2)).cholesky()


def test_gradients_of_structured_solves():
    base, u = RNG.uniform(1, 2, 4), RNG.uniform(-1, 1, (4, 2))
    rhs = RNG.uniform(-1, 1, (4, 2))

    def woodbury(d, uu, r):
        return LA.LinearOperatorLowRankUpdate(LA.LinearOperatorDiag(d), uu).solve(r)

    gradient_checker.check_gradients(woodbury, [base, u, rhs], static_shapes=True)
    gradient_checker.check_gradients(
        lambda m, r: LA.LinearOperatorFullMatrix(m).log_abs_determinant() +
        tf.reduce_sum(LA.LinearOperatorFullMatrix(m).solve(r)), [_well(3), rhs[:3]])


def test_eigvals_cond_and_run_time_assertions():
    spd, nonsymmetric = _spd(3), _well(3)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with tf.Graph().as_default():
        spd_op = LA.LinearOperatorFullMatrix(spd, is_self_adjoint=True)
        plain = LA.LinearOperatorFullMatrix(nonsymmetric)
        with pytest.raises(NotImplementedError, match="self-adjoint"):
            plain.eigvals()
        passing = [spd_op.assert_positive_definite(), spd_op.assert_self_adjoint(),
                   plain.assert_non_singular()]
        failing = [LA.LinearOperatorFullMatrix(singular).assert_non_singular(),
                   plain.assert_self_adjoint(),
                   LA.LinearOperatorFullMatrix(-spd).assert_positive_definite()]
        with tf.Session() as session:
            eigvals, cond = session.run([spd_op.eigvals(), plain.cond()])
            session.run(passing)
            for check in failing:
                with pytest.raises(tf.errors.InvalidArgumentError):
                    session.run(check)
    np.testing.assert_allclose(eigvals, np.linalg.eigvalsh(spd), rtol=1e-10)
    np.testing.assert_allclose(cond, np.linalg.cond(nonsymmetric), rtol=1e-10)


class _Rotation90(LA.LinearOperator):
    """TF's minimal subclass: only _shape, _shape_tensor and _matmul."""

    def __init__(self, batch):
        self._batch = batch
        super().__init__(tf.float64, is_non_singular=True, is_square=True, name="Rotation90")

    def _shape(self):
        return tf.TensorShape([None, 2, 2])

    def _shape_tensor(self):
        return tf.stack([self._batch, 2, 2])

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = tf.linalg.adjoint(x) if adjoint_arg else x
        sign = 1.0 if adjoint else -1.0
        return tf.concat([sign * x[..., 1:, :], -sign * x[..., :1, :]], -2)


def test_a_subclass_with_only_matmul_gets_everything_else():
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
    x = RNG.uniform(-1, 1, (3, 2, 4))
    with tf.Graph().as_default():
        batch = tf.placeholder(tf.int32, [])
        op = _Rotation90(batch)
        fetches = [op.to_dense(), op.determinant(), op.solve(x), op.shape_tensor(),
                   op.adjoint().matmul(x)]
        with tf.Session() as session:
            dense, det, solved, shape, adjoint_x = session.run(fetches, {batch: 3})
    np.testing.assert_allclose(dense, np.broadcast_to(rotation, (3, 2, 2)))
    np.testing.assert_allclose(det, np.ones(3))
    np.testing.assert_allclose(solved, np.linalg.solve(rotation, x), atol=1e-12)
    np.testing.assert_allclose(adjoint_x, rotation.T @ x, atol=1e-12)
    assert list(shape) == [3, 2, 2]


def test_complex_circulant_and_diag():
    spectrum = RNG.uniform(1, 2, (2, 4)) * np.exp(1j * RNG.uniform(-3, 3, (2, 4)))
    columns = np.fft.ifft(spectrum)                    # the first column of each matrix
    dense = np.stack([[[c[(i - j) % 4] for j in range(4)] for i in range(4)] for c in columns])
    diag = RNG.uniform(-1, 1, 3) + 1j * RNG.uniform(-1, 1, 3)
    x = RNG.uniform(-1, 1, (2, 4, 2)) + 1j * RNG.uniform(-1, 1, (2, 4, 2))
    with tf.Graph().as_default():
        circulant = LA.LinearOperatorCirculant(spectrum, input_output_dtype=tf.complex128)
        diag_op = LA.LinearOperatorDiag(diag)
        fetches = [circulant.to_dense(), circulant.matmul(x, adjoint=True), circulant.solve(x),
                   circulant.determinant(), diag_op.matmul(x[0, :3], adjoint=True),
                   diag_op.adjoint().solve(x[0, :3])]
        with tf.Session() as session:
            got = session.run(fetches)
    np.testing.assert_allclose(got[0], dense, atol=1e-12)
    np.testing.assert_allclose(got[1], np.conj(np.swapaxes(dense, -1, -2)) @ x, atol=1e-12)
    np.testing.assert_allclose(got[2], np.linalg.solve(dense, x), atol=1e-12)
    np.testing.assert_allclose(got[3], np.linalg.det(dense), rtol=1e-10)
    np.testing.assert_allclose(got[4], np.conj(diag)[:, None] * x[0, :3], atol=1e-12)
    np.testing.assert_allclose(got[5], x[0, :3] / np.conj(diag)[:, None], atol=1e-12)
    assert not diag_op.is_self_adjoint


def test_circulant_kernel_and_hermitian_spectrum_assertion():
    kernel = RNG.uniform(-1, 1, (2, 3))
    with tf.Graph().as_default():
        real_op = LA.LinearOperatorCirculant2D(np.fft.fft2(kernel), input_output_dtype=tf.float64)
        skewed = LA.LinearOperatorCirculant(np.array([1.0, 2.0j, 3.0]))
        assert real_op.block_shape.as_list() == [2, 3] and real_op.block_depth == 2
        with tf.Session() as session:
            got, shape = session.run([real_op.convolution_kernel(),
                                      real_op.block_shape_tensor()])
            session.run(real_op.assert_hermitian_spectrum())
            with pytest.raises(tf.errors.InvalidArgumentError, match="Hermitian"):
                session.run(skewed.assert_hermitian_spectrum())
    np.testing.assert_allclose(got, kernel, atol=1e-12)
    assert list(shape) == [2, 3]


def test_properties_and_static_sizes():
    with tf.Graph().as_default():
        diag = LA.LinearOperatorDiag([1.0, 2.0])
        scaled = LA.LinearOperatorScaledIdentity(2, 3.0)
        assert diag.diag.shape.as_list() == [2] and scaled.multiplier.shape.as_list() == []
        assert diag.is_self_adjoint and diag.is_square and diag.tensor_rank == 2
        with pytest.raises(TypeError, match="num_rows"):
            LA.LinearOperatorIdentity(tf.constant(3))
        with pytest.raises(ValueError, match="static shape"):
            LA.LinearOperatorBlockDiag([LA.LinearOperatorFullMatrix(
                tf.placeholder(tf.float32, [None, None]))])


def test_low_rank_update_hints_follow_the_base():
    with tf.Graph().as_default():
        base = LA.LinearOperatorDiag([1.0, 2.0, 3.0], is_positive_definite=True)
        u = np.ones((3, 1), np.float32)
        plain = LA.LinearOperatorLowRankUpdate(base, u)
        positive = LA.LinearOperatorLowRankUpdate(base, u, diag_update=[2.0],
                                                  is_diag_update_positive=True)
        unknown = LA.LinearOperatorLowRankUpdate(base, u, diag_update=[-2.0])
        assert plain.is_self_adjoint and plain.is_positive_definite
        assert positive.is_positive_definite and positive.is_diag_update_positive
        assert unknown.is_positive_definite is None
        with tf.Session() as session:
            factor = session.run(plain.cholesky().to_dense())
    np.testing.assert_allclose(factor, np.linalg.cholesky(np.diag([1.0, 2, 3]) + 1), rtol=1e-6)
