"""torch's lazy negative / conjugate views and autograd tensors where gpula keeps or hands on
its operands (issue 17). torch's __dlpack__ exports a negative view's memory without its sign
bit, so any path that passed a raw tensor to the extension read -x; the hostile suite's
all:torch_neg / catalog_views cases found DirectSolver / spsolve doing so. Each test compares
with NumPy on the materialized values."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import gpula as gl
from gpula import _gpula

torch = pytest.importorskip("torch")


def _neg(x: np.ndarray):
    """A lazy negative view (the neg bit) holding x's values."""
    t = torch._neg_view(torch.from_numpy(-x))
    assert t.is_neg()
    return t


def _system(n: int = 8, dtype=np.float64):
    rng = np.random.default_rng(0)
    R = sp.random(n, n, density=0.4, random_state=1)
    S = (R + R.T + sp.eye(n) * n).tocsr().astype(dtype)
    S.sort_indices()
    return S, rng.standard_normal(n).astype(dtype)


def _csr(S, data):
    return gl.sparse.csr_matrix(
        (data, torch.from_numpy(S.indices.astype(np.int64)),
         torch.from_numpy(S.indptr.astype(np.int64))), shape=S.shape)


def test_direct_solver_reads_negative_views_with_their_sign():
    S, x = _system()
    b = S @ x
    A = _csr(S, _neg(S.data.copy()))
    with gl.sparse.DirectSolver(A, torch.from_numpy(b)) as s:  # was -S: x came back as -x
        s.plan()
        s.factorize()
        np.testing.assert_allclose(s.solve().numpy(), x, rtol=1e-10)
        s.reset_operands(b=_neg(2 * b))  # was -2b
        np.testing.assert_allclose(s.solve().numpy(), 2 * x, rtol=1e-10)
    np.testing.assert_allclose(gl.sparse.spsolve(A, _neg(b)).numpy(), x, rtol=1e-10)


def test_csr_matrix_of_a_lazy_view_keeps_what_it_reads():
    """The matrix reads the export's materialized copy: A.data is that copy (a plain tensor),
    not the caller's view, which raw consumers would read without its sign."""
    S, x = _system()
    A = _csr(S, _neg(S.data.copy()))
    assert not A.data.is_neg()
    np.testing.assert_array_equal(A.data.numpy(), S.data)
    np.testing.assert_allclose((A @ torch.from_numpy(x)).numpy(), S @ x, rtol=1e-12)
    plain = torch.from_numpy(S.data.copy())
    assert _csr(S, plain).data.data_ptr() == plain.data_ptr()  # read in place, no copy


@pytest.mark.parametrize("method", ["cg", "gmres", "bicgstab", "minres"])
@pytest.mark.parametrize("make", [_neg, lambda v: torch.from_numpy(v).requires_grad_()])
def test_krylov_takes_lazy_and_autograd_b(method, make):
    S, x = _system()
    xs, info = getattr(gl.sparse.linalg, method)(S, make(S @ x), rtol=1e-12)
    assert info == 0
    np.testing.assert_allclose(xs.numpy(), x, rtol=1e-8)


def test_distributed_scatter_gather_take_lazy_views():
    D = gl.distributed.BlockCyclic(m=5, n=4, mb=2, nb=2, nprow=2)
    a = np.arange(20.0).reshape(5, 4)
    for t in (_neg(a), torch.from_numpy(a.copy()).requires_grad_()):
        local = D.scatter(t, 1, 0)
        np.testing.assert_array_equal(np.asarray(local), D.scatter(a, 1, 0))
        out = np.zeros((5, 4))
        D.gather(_neg(np.asarray(local).copy()), 1, 0, out)
        np.testing.assert_array_equal(out, D.gather(np.asarray(local), 1, 0, np.zeros((5, 4))))


@pytest.mark.parametrize("out", [lambda: _neg(np.zeros((5, 4))),
                                 lambda: torch.zeros(5, 4, dtype=torch.float64).requires_grad_()])
def test_distributed_gather_refuses_outputs_it_cannot_write(out):
    D = gl.distributed.BlockCyclic(m=5, n=4, mb=2, nb=2, nprow=2)
    with pytest.raises(gl.InvalidArgument, match=r"\[distributed.gather\] out "):
        D.gather(np.ones(D.local_shape(1, 0), order="F"), 1, 0, out())


def test_a_raw_negative_view_never_reaches_the_kernels():
    """The extension's backstop: a negative view handed over without gpula's export (which
    materializes it) is refused, not read as -x."""
    with pytest.raises(gl.InvalidArgument, match=r"negative bit"):
        _gpula.SparseCsrMatrix.from_csr(
            np.array([0, 1]), np.array([0]), _neg(np.ones(1)), 1, 1, "test")


def test_copies_names_what_an_export_materialized():
    from gpula import _interop

    plain = torch.ones(3, dtype=torch.float64)
    view = _neg(np.ones(3))
    made = _interop.copies(_interop.export(view), view)
    assert len(made) == 1 and not made[0].is_neg() and made[0].data_ptr() != view.data_ptr()
    assert _interop.copies(_interop.export(plain), plain) == []
    param = torch.nn.Parameter(plain.clone())
    assert _interop.copies(_interop.export(param), param) == []
    pair = _interop.copies([_interop.export(view), _interop.export(plain)], [view, plain])
    assert len(pair) == 1 and torch.equal(pair[0], view)  # lists pairwise: the view's copy
    a = np.ones(3)
    assert _interop.copies(_interop.export(a), a) == []
    # On the CPU there are no streams: handing copies over does nothing.
    _interop.package_of(view).hand_over(made, 12345, torch.device("cpu"))


def _busy(torch, n=4096):
    """Queues a long product on the current stream (a copy made on it lands late)."""
    x = torch.randn(n, n, device="cuda")
    for _ in range(4):
        x = x @ x / n
    return x


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["function", "object", "grouped"])
def test_lazy_views_on_another_stream(kind):
    """A lazy view's copy is made on the current stream; work on an explicit other stream waits
    for it (and the copy is not reused before that work is done, though gpula drops it)."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((256, 128)) + 1j * rng.standard_normal((256, 128))
    b = rng.standard_normal((128, 64)) + 1j * rng.standard_normal((128, 64))
    ta = torch.from_numpy(a.conj().copy()).cuda().conj()  # a lazy conjugate view of a's values
    tb = torch.from_numpy(b).cuda()
    side = torch.cuda.Stream()
    _busy(torch)
    if kind == "function":
        r = gl.matmul(ta, tb, stream=side)
    elif kind == "object":
        with gl.Matmul(ta, tb, stream=side) as mm:
            mm.plan()
            r = mm.execute()
    else:
        ta, tb = ta.reshape(1, 256, 128)[0], tb.reshape(1, 128, 64)
        r = gl.grouped_matmul(ta, tb, [256], stream=side)
    junk = [torch.full((256, 128), 1e30, dtype=torch.complex128, device="cuda") for _ in range(8)]
    side.synchronize()
    del junk
    np.testing.assert_allclose(r.cpu().numpy(), a @ b, rtol=1e-10)
