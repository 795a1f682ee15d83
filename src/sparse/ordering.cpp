// Nested dissection with level-set separators (see sparse_ordering.h).
//
// A subgraph is a list of vertices sharing a label in `label_`; a vertex's neighbours outside the
// subgraph (other subgraphs, separators) carry other labels. Each subgraph is split by one
// breadth-first level structure from a pseudo-peripheral vertex: the separator is the level that
// best trades its size against balance, less its vertices with no neighbour on the far side.
// The two halves are dissected independently (in their own threads near the root) and written
// to disjoint ranges of perm: left half, right half, separator.
#include "sparse/ordering.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <numeric>
#include <system_error>
#include <thread>


namespace gpula::sparse::detail {

namespace {

constexpr int64_t kLeafSize = 64;         // subgraphs this small are not split further
constexpr int kPeripheralSweeps = 5;      // breadth-first searches to find a far vertex
constexpr double kMaxRootShare = 0.10;    // usable only if the root separator is <= 10% of n
constexpr double kMaxSeparatorShare = 0.35;  // and every tree separator <= 35% of its subgraph

// Whether a recorded separator of `sep` vertices, splitting a subgraph of `sub` of the n
// vertices (the root when `root`), fails the quality check.
bool separator_too_large(int64_t sep, int64_t sub, int64_t n, bool root) {
  return (root && sep > kMaxRootShare * static_cast<double>(n)) ||
         sep > kMaxSeparatorShare * static_cast<double>(sub);
}

int64_t index_at(const void* p, int64_t i, int bytes) {
  return bytes == 4 ? static_cast<const int32_t*>(p)[i] : static_cast<const int64_t*>(p)[i];
}

int worker_count(int threads) {
  if (threads > 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

class Dissector {
 public:
  Dissector(const Graph& g, int levels, int threads, bool stop_when_unusable)
      : g_(g),
        levels_(levels),
        label_(g.n, 1),
        dist_(g.n, -1),
        perm_(g.n),
        sizes_((int64_t{1} << levels) - 1, -1),
        subgraph_(sizes_.size(), 0),
        max_threads_(2 * threads),
        stop_when_unusable_(stop_when_unusable) {
    int depth = 0;
    while ((1 << depth) < threads) ++depth;
    spawn_depth_ = threads > 1 ? depth + 2 : 0;  // a few tasks per thread, for balance
  }

  NestedDissection run() {
    std::vector<int32_t> all(g_.n);
    std::iota(all.begin(), all.end(), 0);
    dissect(std::move(all), 1, 0, 0, 0);
    if (error_) std::rethrow_exception(error_);
    NestedDissection r;
    r.levels = levels_;
    if (stopped_.load()) {
      r.reason = stop_reason_;
      return r;  // no tree, no permutation: the dissection stopped early
    }
    r.perm = std::move(perm_);
    r.tree.resize(sizes_.size());
    // heap numbering (children 2k+1, 2k+2) to cuDSS's bottom-up level order
    int64_t out = 0;
    for (int d = levels_ - 1; d >= 0; --d) {
      for (int64_t k = (int64_t{1} << d) - 1; k < (int64_t{2} << d) - 1; ++k) {
        r.tree[out++] = static_cast<int32_t>(std::max<int64_t>(sizes_[k], 0));
      }
    }
    r.root_separator = levels_ > 1 ? std::max<int64_t>(sizes_[0], 0) : 0;
    bool empty = false;
    for (std::size_t k = 0; k < sizes_.size(); ++k) {
      if (sizes_[k] <= 0) empty = true;
      const bool separator = k < (std::size_t{1} << (levels_ - 1)) - 1;
      if (separator && subgraph_[k] > 0) {
        r.worst_separator_share = std::max(
            r.worst_separator_share, static_cast<double>(sizes_[k]) / subgraph_[k]);
      }
    }
    r.complete = !empty;
    if (r.complete) r.perm = level_order(r.perm);
    if (empty) {
      r.reason = "a subgraph of the dissection tree is empty or too small to split";
    } else if (levels_ > 1 && separator_too_large(r.root_separator, g_.n, g_.n, true)) {
      r.reason = "the root separator holds " + std::to_string(r.root_separator) + " of " +
                 std::to_string(g_.n) + " vertices";
    } else if (r.worst_separator_share > kMaxSeparatorShare) {
      r.reason = "a separator holds " +
                 std::to_string(static_cast<int>(100 * r.worst_separator_share)) +
                 "% of its subgraph";
    }
    r.usable = r.reason.empty();
    return r;
  }

 private:
  // The dissection writes each subtree as left subtree, right subtree, separator; cuDSS takes
  // the tree's nodes in the order of its array instead (the deepest recorded subgraphs left to
  // right, then each level's separators, the root's last; bench/probes/probe_cudss_user_perm.py
  // checked this on the permutations cuDSS computes itself). Each node's own vertices keep their
  // order.
  std::vector<int32_t> level_order(const std::vector<int32_t>& post) const {
    const auto count = static_cast<int64_t>(sizes_.size());
    const int64_t internal = (int64_t{1} << (levels_ - 1)) - 1;
    std::vector<int64_t> total(count), lo(count, 0);
    for (int64_t k = count - 1; k >= 0; --k) {
      total[k] = sizes_[k] + (k < internal ? total[2 * k + 1] + total[2 * k + 2] : 0);
    }
    for (int64_t k = 0; k < internal; ++k) {
      lo[2 * k + 1] = lo[k];
      lo[2 * k + 2] = lo[k] + total[2 * k + 1];
    }
    std::vector<int32_t> out;
    out.reserve(post.size());
    for (int d = levels_ - 1; d >= 0; --d) {
      for (int64_t k = (int64_t{1} << d) - 1; k < (int64_t{2} << d) - 1; ++k) {
        const int64_t end = lo[k] + total[k];
        out.insert(out.end(), post.begin() + (end - sizes_[k]), post.begin() + end);
      }
    }
    return out;
  }

  int32_t label(int32_t u) const {
    return std::atomic_ref<int32_t>(const_cast<int32_t&>(label_[u])).load(std::memory_order_relaxed);
  }
  void set_label(int32_t u, int32_t id) {
    std::atomic_ref<int32_t>(label_[u]).store(id, std::memory_order_relaxed);
  }
  int64_t degree(int32_t u) const { return g_.xadj[u + 1] - g_.xadj[u]; }

  // Breadth-first search from r inside subgraph `id`: q gets the reached vertices level by
  // level, starts[l] where level l begins (starts.back() == q.size()).
  void bfs(int32_t r, int32_t id, const std::vector<int32_t>& verts, std::vector<int32_t>& q,
           std::vector<int64_t>& starts) {
    for (int32_t v : verts) dist_[v] = -1;
    q.clear();
    starts.assign(1, 0);
    dist_[r] = 0;
    q.push_back(r);
    for (std::size_t head = 0; head < q.size(); ++head) {
      const int32_t u = q[head];
      if (dist_[u] != dist_[q[starts.back()]]) starts.push_back(static_cast<int64_t>(head));
      for (int64_t e = g_.xadj[u]; e < g_.xadj[u + 1]; ++e) {
        const int32_t v = g_.adj[e];
        if (label(v) == id && dist_[v] == -1) {  // label first: dist_ of others' is theirs
          dist_[v] = dist_[u] + 1;
          q.push_back(v);
        }
      }
    }
    starts.push_back(static_cast<int64_t>(q.size()));
  }

  void dissect(std::vector<int32_t> verts, int32_t id, int64_t offset, int depth, int64_t node) {
    try {
      split(std::move(verts), id, offset, depth, node);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }

  void split(std::vector<int32_t> verts, int32_t id, int64_t offset, int depth, int64_t node) {
    if (stopped_.load(std::memory_order_relaxed)) return;
    const auto s = static_cast<int64_t>(verts.size());
    if (node >= 0) {
      subgraph_[node] = s;
      if (depth == levels_ - 1) {  // a leaf of the recorded tree: its whole subgraph
        sizes_[node] = s;
        node = -1;
      }
    }
    // small subgraphs are leaves, unless the recorded tree still needs a separator of them
    if (s <= kLeafSize && (node < 0 || s < 3)) {
      std::copy(verts.begin(), verts.end(), perm_.begin() + offset);
      return;  // a recorded separator node left at -1 marks the tree as unusable
    }
    std::vector<int32_t> q, part_a, part_b, sep;
    std::vector<int64_t> starts;
    bfs(verts.front(), id, verts, q, starts);
    std::vector<int32_t> others;  // components joining the smaller half after the split
    if (static_cast<int64_t>(q.size()) < s) {
      std::vector<int32_t> order;  // vertices grouped by component, largest component first
      std::vector<int64_t> bounds;
      components(verts, id, q, order, bounds);
      const int64_t largest = bounds[1] - bounds[0];
      if (largest <= kLeafSize && node < 0) {  // nothing left worth dissecting
        std::copy(order.begin(), order.end(), perm_.begin() + offset);
        return;
      }
      if (2 * largest <= s) {  // no dominant component: the components make a balanced split
        for (std::size_t c = 0; c + 1 < bounds.size(); ++c) {
          auto& half = part_a.size() <= part_b.size() ? part_a : part_b;
          half.insert(half.end(), order.begin() + bounds[c], order.begin() + bounds[c + 1]);
        }
      } else {  // dissect the dominant one; the rest joins the smaller half afterwards
        const std::vector<int32_t> dominant(order.begin(), order.begin() + bounds[1]);
        bfs(dominant.front(), id, dominant, q, starts);
        others.assign(order.begin() + bounds[1], order.end());
      }
    }
    if (part_a.empty() && part_b.empty()) {
      // pseudo-peripheral vertex: restart from a least-degree vertex of the last level while the
      // eccentricity grows
      int64_t ecc = static_cast<int64_t>(starts.size()) - 2;
      for (int sweep = 0; sweep < kPeripheralSweeps; ++sweep) {
        int32_t far = q[starts[ecc]];
        for (int64_t i = starts[ecc]; i < starts[ecc + 1]; ++i) {
          if (degree(q[i]) < degree(far)) far = q[i];
        }
        std::vector<int32_t> q2;
        std::vector<int64_t> starts2;
        bfs(far, id, q, q2, starts2);
        const int64_t ecc2 = static_cast<int64_t>(starts2.size()) - 2;
        const bool longer = ecc2 > ecc;
        q.swap(q2);
        starts.swap(starts2);
        if (!longer) break;
        ecc = ecc2;
      }
      if (starts.size() < 4) {  // diameter <= 1 (a clique)
        if (others.empty()) {  // nothing to gain from splitting
          std::copy(verts.begin(), verts.end(), perm_.begin() + offset);
          return;
        }
        part_a = q;  // the clique against the other components
      } else {
        level_separator(id, q, starts, part_a, part_b, sep);
      }
      auto& smaller = part_a.size() <= part_b.size() ? part_a : part_b;
      smaller.insert(smaller.end(), others.begin(), others.end());
    }
    // a recorded separator must not be empty: any vertex of the larger half can join it
    if (node >= 0 && sep.empty()) {
      auto& larger = part_a.size() >= part_b.size() ? part_a : part_b;
      sep.push_back(larger.back());
      larger.pop_back();
    }
    if (node >= 0) {
      sizes_[node] = static_cast<int64_t>(sep.size());
      if (stop_when_unusable_ &&
          separator_too_large(static_cast<int64_t>(sep.size()), s, g_.n, node == 0)) {
        std::lock_guard<std::mutex> lock(error_mutex_);
        stop_reason_ = "a separator holds " + std::to_string(sep.size()) + " of its subgraph's " +
                       std::to_string(s) + " vertices (level sets separate this graph poorly)";
        stopped_.store(true);
        return;
      }
    }
    for (int32_t v : sep) set_label(v, 0);
    const int32_t id_a = next_id_.fetch_add(2), id_b = id_a + 1;
    for (int32_t v : part_a) set_label(v, id_a);
    for (int32_t v : part_b) set_label(v, id_b);
    const auto na = static_cast<int64_t>(part_a.size()), nb = static_cast<int64_t>(part_b.size());
    std::copy(sep.begin(), sep.end(), perm_.begin() + offset + na + nb);
    const int64_t child_a = node >= 0 ? 2 * node + 1 : -1, child_b = node >= 0 ? 2 * node + 2 : -1;
    std::vector<int32_t>().swap(q);
    std::vector<int32_t>().swap(verts);
    std::thread left;
    if (depth < spawn_depth_ && na > 0 && nb > 0 && live_threads_.fetch_add(1) < max_threads_) {
      try {
        left = std::thread([&, a = std::move(part_a)]() mutable {
          dissect(std::move(a), id_a, offset, depth + 1, child_a);
          live_threads_.fetch_sub(1);
        });
      } catch (const std::system_error&) {  // no thread to be had: the half runs here
        live_threads_.fetch_sub(1);
      }
    } else if (depth < spawn_depth_ && na > 0 && nb > 0) {
      live_threads_.fetch_sub(1);
    }
    if (left.joinable()) {
      dissect(std::move(part_b), id_b, offset + na, depth + 1, child_b);
      left.join();
    } else {
      split_or_mark(std::move(part_a), id_a, offset, depth + 1, child_a);
      split_or_mark(std::move(part_b), id_b, offset + na, depth + 1, child_b);
    }
  }

  void split_or_mark(std::vector<int32_t> verts, int32_t id, int64_t offset, int depth,
                     int64_t node) {
    if (!verts.empty() || node >= 0) split(std::move(verts), id, offset, depth, node);
  }

  // At least three levels. The separator is the smallest level L_k (0 < k < last) whose sides,
  // a and b vertices before and after it, hold at least 30% each of a + b (nearer balance wins
  // ties, by the cost |L_k| (1 + |a - b| / (a + b))); failing any, the most balanced level. L_k's
  // vertices with no neighbour in L_{k+1} then join the first half.
  void level_separator(int32_t id, const std::vector<int32_t>& q,
                       const std::vector<int64_t>& starts, std::vector<int32_t>& part_a,
                       std::vector<int32_t>& part_b, std::vector<int32_t>& sep) {
    const int64_t nlev = static_cast<int64_t>(starts.size()) - 1, s = starts.back();
    int64_t best = -1, most_balanced = 1;
    double best_cost = 0, best_gap = 0;
    for (int64_t k = 1; k + 1 < nlev; ++k) {
      const double a = static_cast<double>(starts[k]), b = static_cast<double>(s - starts[k + 1]);
      const double gap = std::abs(a - b) / std::max(a + b, 1.0);
      if (k == 1 || gap < best_gap) {
        most_balanced = k;
        best_gap = gap;
      }
      if (std::min(a, b) < 0.3 * (a + b)) continue;
      const double cost = static_cast<double>(starts[k + 1] - starts[k]) * (1.0 + gap);
      if (best < 0 || cost < best_cost) {
        best = k;
        best_cost = cost;
      }
    }
    if (best < 0) best = most_balanced;
    part_a.assign(q.begin(), q.begin() + starts[best]);
    part_b.assign(q.begin() + starts[best + 1], q.end());
    const int32_t far_level = dist_[q[starts[best + 1]]];
    for (int64_t i = starts[best]; i < starts[best + 1]; ++i) {
      const int32_t u = q[i];
      bool touches_far_side = false;
      for (int64_t e = g_.xadj[u]; e < g_.xadj[u + 1] && !touches_far_side; ++e) {
        const int32_t v = g_.adj[e];
        touches_far_side = label(v) == id && dist_[v] == far_level;
      }
      (touches_far_side ? sep : part_a).push_back(u);
    }
  }

  // The connected components of a subgraph: `order` lists its vertices component by component,
  // the largest first (ties: the one found first), component c at [bounds[c], bounds[c+1]).
  // `first` is the component a search already found (its vertices have dist_ >= 0, the others
  // -1); dist_ then holds each vertex's component number.
  void components(const std::vector<int32_t>& verts, int32_t id, const std::vector<int32_t>& first,
                  std::vector<int32_t>& order, std::vector<int64_t>& bounds) {
    std::vector<int32_t> found(first);  // discovery order, component after component
    std::vector<int64_t> found_bounds{0, static_cast<int64_t>(first.size())};
    for (int32_t v : first) dist_[v] = 0;
    found.reserve(verts.size());
    for (int32_t r : verts) {
      if (dist_[r] != -1) continue;
      const auto comp = static_cast<int32_t>(found_bounds.size() - 1);
      dist_[r] = comp;
      found.push_back(r);
      for (std::size_t head = found.size() - 1; head < found.size(); ++head) {
        const int32_t u = found[head];
        for (int64_t e = g_.xadj[u]; e < g_.xadj[u + 1]; ++e) {
          const int32_t v = g_.adj[e];
          if (label(v) == id && dist_[v] == -1) {
            dist_[v] = comp;
            found.push_back(v);
          }
        }
      }
      found_bounds.push_back(static_cast<int64_t>(found.size()));
    }
    std::vector<int32_t> rank(found_bounds.size() - 1);
    std::iota(rank.begin(), rank.end(), 0);
    std::stable_sort(rank.begin(), rank.end(), [&](int32_t x, int32_t y) {
      return found_bounds[x + 1] - found_bounds[x] > found_bounds[y + 1] - found_bounds[y];
    });
    order.clear();
    order.reserve(found.size());
    bounds.assign(1, 0);
    for (int32_t c : rank) {
      order.insert(order.end(), found.begin() + found_bounds[c], found.begin() + found_bounds[c + 1]);
      bounds.push_back(static_cast<int64_t>(order.size()));
    }
  }

  const Graph& g_;
  const int levels_;
  int spawn_depth_ = 0;
  std::vector<int32_t> label_, dist_, perm_;
  std::vector<int64_t> sizes_, subgraph_;
  std::atomic<int32_t> next_id_{2};
  const int max_threads_;
  std::atomic<int> live_threads_{0};
  const bool stop_when_unusable_;
  std::atomic<bool> stopped_{false};
  std::string stop_reason_;
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace

Graph symmetric_pattern(int64_t n, const void* indptr, const void* indices, int index_bytes) {
  auto ptr = [&](int64_t i) { return index_at(indptr, i, index_bytes); };
  auto col = [&](int64_t k) { return index_at(indices, k, index_bytes); };
  std::vector<int64_t> count(n + 1, 0);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = ptr(i); k < ptr(i + 1); ++k) {
      const int64_t j = col(k);
      if (j == i) continue;
      std::atomic_ref<int64_t>(count[i]).fetch_add(1, std::memory_order_relaxed);
      std::atomic_ref<int64_t>(count[j]).fetch_add(1, std::memory_order_relaxed);
    }
  }
  std::vector<int64_t> start(n + 1, 0);
  for (int64_t i = 0; i < n; ++i) start[i + 1] = start[i] + count[i];
  std::vector<int32_t> both(start[n]);
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = ptr(i); k < ptr(i + 1); ++k) {
      const int64_t j = col(k);
      if (j == i) continue;
      both[std::atomic_ref<int64_t>(fill[i]).fetch_add(1, std::memory_order_relaxed)] =
          static_cast<int32_t>(j);
      both[std::atomic_ref<int64_t>(fill[j]).fetch_add(1, std::memory_order_relaxed)] =
          static_cast<int32_t>(i);
    }
  }
  // each row sorted (which also makes the result independent of the threads' interleaving)
  // and its duplicates merged
#pragma omp parallel for schedule(dynamic, 4096)
  for (int64_t i = 0; i < n; ++i) {
    auto* b = both.data() + start[i];
    auto* e = both.data() + start[i + 1];
    std::sort(b, e);
    count[i] = std::unique(b, e) - b;
  }
  Graph g;
  g.n = static_cast<int32_t>(n);
  g.xadj.assign(n + 1, 0);
  for (int64_t i = 0; i < n; ++i) g.xadj[i + 1] = g.xadj[i] + count[i];
  g.adj.resize(g.xadj[n]);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    std::copy(both.begin() + start[i], both.begin() + start[i] + count[i],
              g.adj.begin() + g.xadj[i]);
  }
  return g;
}

int nested_dissection_levels(int64_t n) {
  int levels = 1;
  while (levels < 10 && (n >> levels) >= 1000) ++levels;
  return levels;
}

NestedDissection level_set_nested_dissection(const Graph& g, int levels, int threads,
                                             bool stop_when_unusable) {
  if (g.n == 0) {
    NestedDissection r;
    r.reason = "empty matrix";
    return r;
  }
  return Dissector(g, std::max(levels, 1), worker_count(threads), stop_when_unusable).run();
}

}  // namespace gpula::sparse::detail
