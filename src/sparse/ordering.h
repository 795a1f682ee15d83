#pragma once
// Fill-reducing ordering for the sparse direct solvers: nested dissection with level-set
// separators (breadth-first level structures from a pseudo-peripheral vertex), computed on the
// host with one task per subgraph. It exists for speed: on the 2-D Poisson matrix with n = 1e6
// cuDSS 1.0's own multi-threaded reordering takes 1.2-1.4 s of a 1.5 s first solve on the H200's
// 16-core host, and METIS_NodeND 7.3 s (bench/probes/probe_cudss_user_perm.py). Level-set
// separators are as small as METIS's on meshes (grids, finite-element and PDE matrices), but can
// be poor on graphs with a small diameter (power-law graphs), so the result carries a quality
// verdict: a solver takes it only when `usable`, and uses its library's own ordering otherwise.
#include <cstdint>
#include <string>
#include <vector>

namespace gpula::sparse::detail {

/// An undirected graph in CSR form, without self loops: the pattern of A + A^T.
struct Graph {
  int32_t n = 0;
  std::vector<int64_t> xadj;  // n + 1
  std::vector<int32_t> adj;
};

/// The pattern of A + A^T without the diagonal, from A's host CSR arrays (int32 or int64
/// indices, read as `index_bytes` wide; valid, as validate_csr checks them, and n below 2^30).
/// Duplicates are merged.
Graph symmetric_pattern(int64_t n, const void* indptr, const void* indices, int index_bytes);

struct NestedDissection {
  /// perm[i] = the original index of the i-th row/column of the reordered matrix (new -> old),
  /// as cuDSS's CUDSS_DATA_USER_PERM and METIS's perm take it.
  std::vector<int32_t> perm;
  /// The top `levels` levels of the dissection tree, 2^levels - 1 sizes, bottom-up: the
  /// 2^(levels-1) subgraphs of the deepest level left to right, then the separators of each level
  /// above them left to right, the root separator last: the layout of cuDSS's
  /// CUDSS_DATA_ND_PARTITION_TREE. When `complete`, perm lists the nodes' vertices in the same
  /// order, each node's block contiguous (so every separator comes after both its subtrees), as
  /// cuDSS lays out its own permutation (both measured by probe_cudss_user_perm). Inside a
  /// deepest-level subgraph the dissection goes on: left part, right part, separator.
  std::vector<int32_t> tree;
  int levels = 0;
  /// Whether every node of the recorded tree holds vertices (a tree cuDSS can take).
  bool complete = false;
  /// Whether a solver should use it (complete, and its separators pass the quality check);
  /// `reason` says why not.
  bool usable = false;
  std::string reason;
  /// Sizes of the root separator and of the largest separator relative to its subgraph.
  int64_t root_separator = 0;
  double worst_separator_share = 0;
};

/// Tree levels for a matrix of order n: leaves of about a thousand vertices, at most 10 (what
/// cuDSS uses by default).
int nested_dissection_levels(int64_t n);

/// Nested dissection of g with `levels` recorded tree levels (>= 1), run on up to `threads`
/// host threads (0: all cores; at most twice that many run at once). Deterministic: the same
/// graph gives the same result whatever the thread count. Recursion continues below the
/// recorded levels down to subgraphs of 64 vertices. With `stop_when_unusable`, the dissection
/// stops as soon as a separator fails the quality check: the result is then unusable and its
/// perm must not be used.
NestedDissection level_set_nested_dissection(const Graph& g, int levels, int threads = 0,
                                             bool stop_when_unusable = false);

}  // namespace gpula::sparse::detail
