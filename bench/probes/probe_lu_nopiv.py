"""Probe: how fast can a dense fp64 solve at n=8192 (nrhs=16) go on this GPU?

Times, side by side: LU with partial pivoting (torch / cuSOLVER getrf), LU without pivoting
(cuSOLVER getrf with no pivot array, and a blocked right-looking LU built from cuBLAS trsm and
gemm), and the randomized butterfly transformation (RBT, depth 2) that makes unpivoted LU safe
with high probability, followed by fp64 iterative refinement. Reports backward errors
||b - Ax||_1 / (||A||_1 ||x||_1) of each."""
import math

import torch

n, nrhs = 8192, 16
dev = "cuda"
torch.manual_seed(0)
A = torch.randn(n, n, dtype=torch.float64, device=dev)
B = torch.randn(n, nrhs, dtype=torch.float64, device=dev)


def timed(fn, reps=5):
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        out = fn()
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2], out


def berr(x):
    r = B - A @ x
    return float(torch.linalg.matrix_norm(r, 1) / (torch.linalg.matrix_norm(A, 1) * torch.linalg.matrix_norm(x, 1)))


def butterfly_diags(m, g):
    return torch.exp((torch.rand(m, dtype=torch.float64, device=dev, generator=g) - 0.5) / 10)


g = torch.Generator(device=dev)
g.manual_seed(1)
# depth-2 recursive butterflies: U = diag(U1, U2) Ub, V likewise
U = {"big": (butterfly_diags(n // 2, g), butterfly_diags(n // 2, g)),
     "small": [(butterfly_diags(n // 4, g), butterfly_diags(n // 4, g)) for _ in range(2)]}
V = {"big": (butterfly_diags(n // 2, g), butterfly_diags(n // 2, g)),
     "small": [(butterfly_diags(n // 4, g), butterfly_diags(n // 4, g)) for _ in range(2)]}
s2 = 1 / math.sqrt(2)


def bt_rows(M, r, s):  # B^T M, B = [R S; R -S]/sqrt2
    h = M.shape[0] // 2
    top, bot = M[:h], M[h:]
    return torch.cat(((top + bot) * (r[:, None] * s2), (top - bot) * (s[:, None] * s2)))


def b_cols(M, r, s):  # M B
    h = M.shape[1] // 2
    left, right = M[:, :h], M[:, h:]
    return torch.cat(((left + right) * (r[None, :] * s2), (left - right) * (s[None, :] * s2)), 1)


def b_rows(M, r, s):  # B M
    h = M.shape[0] // 2
    top, bot = M[:h] * r[:, None], M[h:] * s[:, None]
    return torch.cat((top + bot, top - bot)) * s2


def ut_apply(M):  # U^T M = Ub^T diag(U1^T, U2^T) M
    h = M.shape[0] // 2
    M = torch.cat((bt_rows(M[:h], *U["small"][0]), bt_rows(M[h:], *U["small"][1])))
    return bt_rows(M, *U["big"])


def av_apply(M):  # M V = M diag(V1, V2) Vb
    h = M.shape[1] // 2
    M = torch.cat((b_cols(M[:, :h], *V["small"][0]), b_cols(M[:, h:], *V["small"][1])), 1)
    return b_cols(M, *V["big"])


def v_apply(y):  # V y = diag(V1, V2) Vb y
    y = b_rows(y, *V["big"])
    h = y.shape[0] // 2
    return torch.cat((b_rows(y[:h], *V["small"][0]), b_rows(y[h:], *V["small"][1])))


def lu_nopiv_blocked(M, nb):
    M = M.clone()
    for k in range(0, n, nb):
        e = min(k + nb, n)
        d = torch.linalg.lu_factor_ex(M[k:e, k:e], pivot=False)[0]
        M[k:e, k:e] = d
        if e < n:
            L = torch.tril(d, -1) + torch.eye(e - k, dtype=M.dtype, device=dev)
            Ud = torch.triu(d)
            M[k:e, e:] = torch.linalg.solve_triangular(L, M[k:e, e:], upper=False, unitriangular=True)
            M[e:, k:e] = torch.linalg.solve_triangular(Ud, M[e:, k:e], upper=True, left=False)
            M[e:, e:].addmm_(M[e:, k:e], M[k:e, e:], alpha=-1)
    return M


def lu_solve_nopiv(LU, rhs):
    y = torch.linalg.solve_triangular(LU, rhs, upper=False, unitriangular=True)
    return torch.linalg.solve_triangular(LU, y, upper=True)


print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
t, x = timed(lambda: torch.linalg.solve(A, B))
print(f"torch.linalg.solve (getrf+getrs, pivoting)   {t:8.2f} ms  berr {berr(x):.1e}")
t, _ = timed(lambda: torch.linalg.lu_factor(A))
print(f"torch lu_factor pivot=True                    {t:8.2f} ms")
t, (LUn, _) = timed(lambda: torch.linalg.lu_factor_ex(A, pivot=False)[:2])
print(f"torch lu_factor_ex pivot=False                {t:8.2f} ms")
for nb in (256, 512, 1024):
    t, _ = timed(lambda: lu_nopiv_blocked(A, nb), reps=3)
    print(f"blocked nopiv LU (torch trsm+gemm) nb={nb:4d}    {t:8.2f} ms")
t, Ar = timed(lambda: av_apply(ut_apply(A)))
print(f"RBT depth 2 of A (torch elementwise)          {t:8.2f} ms")


def rbt_solve(steps, nb=512):
    Ar = av_apply(ut_apply(A))
    LU = lu_nopiv_blocked(Ar, nb)
    x = v_apply(lu_solve_nopiv(LU, ut_apply(B)))
    for _ in range(steps):
        r = B - A @ x
        x = x + v_apply(lu_solve_nopiv(LU, ut_apply(r)))
    return x


for steps in (0, 1, 2, 3):
    t, x = timed(lambda: rbt_solve(steps), reps=3)
    print(f"RBT + nopiv LU + {steps} refinement steps        {t:8.2f} ms  berr {berr(x):.1e}")
t, x = timed(lambda: lu_solve_nopiv(torch.linalg.lu_factor_ex(A, pivot=False)[0], B), reps=3)
print(f"nopiv LU of A itself (no RBT), 0 steps        {t:8.2f} ms  berr {berr(x):.1e}")
t, _ = timed(lambda: lu_solve_nopiv(LUn, B))
print(f"two trsm nrhs=16                              {t:8.2f} ms")
t, _ = timed(lambda: B - A @ B)
print(f"residual gemm nrhs=16                         {t:8.2f} ms")
C = torch.empty(n, n, dtype=torch.float64, device=dev)
t, _ = timed(lambda: torch.mm(A, A, out=C))
print(f"dgemm 8192^3                                  {t:8.2f} ms  {2 * n**3 / t / 1e9:.1f} TFLOP/s")

# Issue 2's MLP shape read as M x K x N (an up-projection, the layer that carries bias+act).
M_, K_, N_ = 65536, 512, 2048
x = torch.randn(M_, K_, dtype=torch.bfloat16, device=dev)
w = torch.randn(K_, N_, dtype=torch.bfloat16, device=dev)
b = torch.randn(N_, dtype=torch.bfloat16, device=dev)
for act in ("relu", "gelu"):
    t1, _ = timed(lambda: torch._addmm_activation(b, x, w, use_gelu=act == "gelu"), reps=7)
    if act == "relu":
        t2, _ = timed(lambda: torch.relu(torch.matmul(x, w) + b), reps=7)
    else:
        t2, _ = timed(lambda: torch.nn.functional.gelu(torch.matmul(x, w) + b, approximate="tanh"), reps=7)
    t3, _ = timed(lambda: torch.matmul(x, w), reps=7)
    print(f"MLP {M_}x{K_}->{N_} {act}: addmm_act {t1:.3f} ms, unfused {t2:.3f} ms, matmul alone {t3:.3f} ms, unfused/fused {t2 / t1:.2f}x")
