"""A small user program over gpula's documented API, written as a user of a typed code base would:
test_typing.py checks it with ``mypy --strict`` and runs it. Every call is one the README or an
API docstring shows."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
# SciPy ships no type information (the scipy-stubs package adds it).
import scipy.sparse as sp  # type: ignore[import-untyped, unused-ignore]

import gpula as gl

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]


def dense_layer(x: F32, w: F32, b: F32) -> F32:
    y: F32 = gl.matmul(x, w, epilog=gl.Epilog.RELU_BIAS, epilog_inputs={"bias": b})
    return y


def planned(x: F32, w: F32, b: F32) -> F32:
    options = gl.MatmulOptions(compute_type=gl.ComputeType.COMPUTE_32F)
    with gl.Matmul(x, w, options=options) as mm:
        algorithms = mm.plan(epilog=gl.Epilog.RELU_BIAS, epilog_inputs={"bias": b})
        assert len(algorithms) >= 1
        mm.autotune(iterations=2)
        y: F32 = mm.execute()
        mm.reset_operands(a=2 * x)
        y = mm.execute()
    return y


def dense_linalg(k: F64, a: F64, y: F64) -> float:
    c = gl.linalg.cholesky(k)
    alpha: F64 = gl.linalg.cho_solve((c, True), y)
    sign, logabsdet = gl.linalg.slogdet(k)
    lu, piv = gl.linalg.lu_factor(k)
    x: F64 = gl.linalg.lu_solve((lu, piv), y)
    x = gl.linalg.solve(k, y, assume_a="pos")
    q, r = gl.linalg.qr(a)
    solution, residuals, rank, sv = gl.linalg.lstsq(a, a @ x)
    u, s, vh = gl.linalg.svd(a, full_matrices=False)
    res = gl.linalg.eigh(k)
    w: F64 = res.eigenvalues
    ev = gl.linalg.eig(k).eigenvalues
    # issue 22 (d2): eigh(a, b), ldl, expm, matrix_power, multi_dot
    wb, vb = gl.linalg.eigh(k, np.eye(k.shape[0]), type=1)
    lfac, dfac, perm = gl.linalg.ldl(k)
    e: F64 = gl.linalg.expm(k / 10)
    k2: F64 = gl.linalg.matrix_power(k, 2)
    aka: F64 = gl.linalg.multi_dot([a, k, a.T])
    assert wb.shape == w.shape and vb.shape == lfac.shape == dfac.shape == e.shape == k2.shape
    assert perm.shape == w.shape and aka.shape == (a.shape[0], a.shape[0])
    assert q.shape == a.shape and r.shape == (a.shape[1], a.shape[1]) and rank == a.shape[1]
    assert u.shape == a.shape and s.shape == (a.shape[1],) and vh.shape == r.shape
    assert solution.shape == x.shape and sv.shape == (a.shape[1],) and residuals.shape == (1,)
    assert ev.shape == w.shape and res.eigenvectors.shape == k.shape
    assert float(sign) == 1.0
    return float(np.linalg.norm(k @ alpha - y) + abs(logabsdet - np.linalg.slogdet(k)[1]))


def sparse_solve(n: int) -> F64:
    S = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n), format="csr")
    A = gl.sparse.csr_matrix(S)
    b = np.ones(n)
    y: F64 = A @ b
    x: F64 = gl.sparse.spsolve(A, b)
    x_cg, info = gl.sparse.linalg.cg(A, b, rtol=1e-10, M="jacobi")
    assert info == 0 and y.shape == (n,)
    return np.asarray(x - x_cg, dtype=np.float64)


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16), dtype=np.float32)
    w = rng.standard_normal((16, 4), dtype=np.float32)
    b = np.zeros(4, np.float32)
    assert np.allclose(dense_layer(x, w, b), np.maximum(x @ w + b, 0), atol=1e-5)
    assert np.allclose(planned(x, w, b), np.maximum(2 * x @ w + b, 0), atol=1e-4)

    g = rng.standard_normal((5, 5))
    k: F64 = g @ g.T + 5 * np.eye(5)
    assert dense_linalg(k, rng.standard_normal((7, 5)), rng.standard_normal(5)) < 1e-8
    assert float(np.abs(sparse_solve(30)).max()) < 1e-6

    devices: dict[str, object] = gl.devices()
    assert "cpu" in str(devices["devices"])
    try:
        gl.linalg.cholesky(-np.eye(3))
    except gl.NotPositiveDefinite as e:
        assert isinstance(e, gl.LinAlgError) and isinstance(e, np.linalg.LinAlgError)
        print(f"caught: {e} (order {e.order})")
    try:
        gl.matmul(np.ones((2, 3)), np.ones((4, 2)))
    except gl.InvalidArgument as e:
        assert isinstance(e, gl.Error) and isinstance(e, ValueError)
    print("typing_user_script: ok")


if __name__ == "__main__":
    main()
