#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_sparse_validate into fuzz/corpus (byte layout: the comment at
the top of fuzz/sparse_fuzz_input.h). Run from anywhere: python3 fuzz/make_corpus.py"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")

CSR, COO, CSC, VIEW, WITH_VALUES = range(5)
I32, I64 = 0, 1
F32, F64, C64, C128 = (0 << 1), (1 << 1), (2 << 1), (3 << 1)
RAW_PTR = 1


def b(x):  # one int8 entry
    return x & 0xFF


def val(x):  # a value byte: x in quarters
    return b(round(x * 4))


def case(mode, dt, rows, cols, nnz, a, bb, values, lay=0, pert=(0, 0, 0), pgen=RAW_PTR, extra=None):
    out = [mode, dt, lay, rows, cols, nnz, *pert, pgen]
    out += [b(x) for x in a] + [b(x) for x in bb] + list(values)
    if extra is not None:
        out.append(extra)
    return bytes(out)


def vals(*xs):
    return [val(x) for x in xs]


SEEDS = {
    # valid: the 3x4 [[1 0 2 0] [0 0 0 0] [3 4 0 5]], int32 / float64
    "csr_valid_3x4": case(CSR, I32 | F64, 3, 4, 5, [0, 2, 2, 5], [0, 2, 0, 1, 3], vals(1, 2, 3, 4, 5)),
    # valid, canonicalized: a row with unsorted and duplicate columns, int64 / float32
    "csr_unsorted_duplicates": case(CSR, I64 | F32, 1, 3, 3, [0, 3], [2, 0, 2], vals(1, 2, 3)),
    "csr_empty_0x0": case(CSR, I32 | F32, 0, 0, 0, [0], [], []),
    # invalid: indptr decreasing, indptr[0] != 0, index out of range, lengths disagreeing
    "csr_indptr_decreasing": case(CSR, I32 | F64, 3, 4, 5, [0, 3, 2, 5], [0, 2, 0, 1, 3], vals(1, 2, 3, 4, 5)),
    "csr_indptr_start": case(CSR, I32 | F64, 1, 4, 1, [1, 1], [0], vals(1)),
    "csr_index_out_of_range": case(CSR, I64 | C128, 2, 4, 2, [0, 1, 2], [3, 4], vals(1, 0, 2, 0)),
    "csr_values_too_long": case(CSR, I32 | F32, 2, 2, 2, [0, 1, 2], [0, 1], vals(1, 2, 3), pert=(0, 0, 0xC4)),
    "csr_index_dtype_mismatch": case(CSR, I32 | 0x08 | F64, 2, 2, 2, [0, 1, 2], [0, 1], vals(1, 2)),
    "csr_values_bad_dtype": case(CSR, I32 | 0x10 | F64, 2, 2, 2, [0, 1, 2], [0, 1], vals(1, 2)),
    "csr_negative_rows": case(CSR, I32 | F64, 0xE0, 2, 0, [0], [], []),
    "csr_rows_int64_max": case(CSR, I64 | F64, 0xFF, 2, 0, [0], [], []),
    "csr_indices_strided": case(CSR, I32 | F64, 1, 4, 2, [0, 2], [0, 1], vals(1, 2), lay=0b010 | (1 << 3)),
    # valid COO with a duplicate, complex64; invalid: a row of -1, a col past cols
    "coo_valid_duplicates": case(COO, I32 | C64, 2, 2, 3, [0, 1, 0], [1, 0, 1], vals(1, -1, 2, 0, 0.5, 0.25)),
    "coo_row_negative": case(COO, I64 | F64, 2, 2, 2, [0, -1], [0, 1], vals(1, 2)),
    "coo_col_out_of_range": case(COO, I32 | F32, 2, 2, 2, [0, 1], [0, 2], vals(1, 2)),
    "coo_negative_lengths": case(COO, I32 | F32, 2, 2, 2, [0, 1], [0, 1], vals(1, 2), lay=0b111 | (3 << 3)),
    # valid CSC, complex128 / int64; invalid: colptr not ending at nnz
    "csc_valid": case(CSC, I64 | C128, 3, 2, 3, [0, 2, 3], [2, 0, 1], vals(1, 0, 2, 1, 3, -1)),
    "csc_colptr_end": case(CSC, I32 | F64, 3, 2, 3, [0, 2, 2], [2, 0, 1], vals(1, 2, 3)),
    # check_csr + validate_csr on views: valid; indices and values of one negative length
    "view_valid": case(VIEW, I32 | F64, 2, 3, 3, [0, 2, 3], [1, 0, 2], vals(1, 2, 3)),
    "view_negative_lengths": case(VIEW, I32 | F64, 2, 3, 0, [0, 0, 0], [], [], lay=0b110 | (3 << 3)),
    "view_null_data": case(VIEW, I64 | F32, 1, 3, 1, [0, 1], [1], vals(1), lay=0b100 | (2 << 3)),
    # with_values: the right length (float64), one too many
    "with_values_ok": case(WITH_VALUES, I32 | F32, 2, 2, 2, [0, 1, 2], [1, 0], vals(1, 2), extra=(1 << 4)),
    "with_values_too_long": case(WITH_VALUES, I32 | F32, 2, 2, 2, [0, 1, 2], [1, 0], vals(1, 2),
                                 extra=(1 << 4) | 8 | 4),
}

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(SEEDS)} seeds to {OUT}")
