"""2-D Poisson-like problem -div(k(x, y) grad u) = 1 on an m x m grid whose coefficient k changes
over several steps (same 5-point pattern): DirectSolver plans once and refactorizes each step.
Each step is checked against scipy.sparse.linalg.spsolve and timed (CPU backend: SuiteSparse).
"""

import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import gpula as gl


def operator(m: int, k: np.ndarray) -> sp.csr_matrix:
    """5-point finite-volume matrix with harmonic-mean face coefficients (Dirichlet boundary)."""
    kx = 2 * k[:, :-1] * k[:, 1:] / (k[:, :-1] + k[:, 1:])  # faces between (i, j) and (i, j+1)
    ky = 2 * k[:-1, :] * k[1:, :] / (k[:-1, :] + k[1:, :])
    diag = np.zeros((m, m)) + 4 * k  # boundary faces use the cell's own coefficient
    diag[:, :-1] += kx - k[:, :-1]
    diag[:, 1:] += kx - k[:, 1:]
    diag[:-1, :] += ky - k[:-1, :]
    diag[1:, :] += ky - k[1:, :]
    east = np.zeros((m, m))
    east[:, :-1] = -kx
    south = np.zeros((m, m))
    south[:-1, :] = -ky
    n = m * m
    e, s = east.ravel()[:-1], south.ravel()[:-m]
    a = sp.diags([diag.ravel(), e, e, s, s], [0, 1, -1, m, -m], shape=(n, n), format="csr")
    a.sort_indices()
    return a


def main(m: int = 200, steps: int = 5) -> None:
    y, x = np.mgrid[0:1:m * 1j, 0:1:m * 1j]
    b = np.full(m * m, 1.0 / m**2)
    solver = None
    for step in range(steps):
        k = 1.0 + 0.5 * np.sin(2 * np.pi * (x + 0.1 * step)) * np.cos(2 * np.pi * y)
        a = operator(m, k)
        t0 = time.perf_counter()
        if solver is None:
            solver = gl.sparse.DirectSolver(a, b)
            solver.plan()
        else:
            solver.reset_operands(a=a)
        solver.factorize()
        u = solver.solve()
        t_gl = time.perf_counter() - t0
        t0 = time.perf_counter()
        ref = spla.spsolve(a, b)
        t_sp = time.perf_counter() - t0
        err = np.linalg.norm(u - ref) / np.linalg.norm(ref)
        print(f"step {step}: gpula cpu {t_gl * 1e3:7.1f} ms  scipy {t_sp * 1e3:7.1f} ms  "
              f"rel. diff {err:.1e}")
        assert err < 1e-10
    solver.free()


if __name__ == "__main__":
    main()
