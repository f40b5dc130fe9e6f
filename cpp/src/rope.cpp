// RoPE of a multi-head attention layer (Su et al. 2021, "RoFormer"): the cos/sin table and the
// rotation of Q and K rows in place (mha::Config: rope, rope_dim, rope_base, rope_interleaved).
#include <algorithm>
#include <cmath>
#include <vector>

#include "attention_internal.hpp"

namespace mha {

Status Layer::ensure_rope_table(int npos) {
  const Resolved& r = cfg_;
  if (!r.has_rope() || npos <= rope_npos_) return Status::Ok();
  if (rope_col_.empty()) {  // columns of the distinct widths
    std::vector<int> widths;
    rope_col_.resize(r.num_heads);
    for (int i = 0; i < r.num_heads; ++i) {
      const int w = r.rope_width(i);
      size_t k = 0, col = 0;
      while (k < widths.size() && widths[k] != w) col += widths[k++];
      if (k == widths.size()) widths.push_back(w);
      rope_col_[i] = int(col);
    }
    rope_stride_ = 0;
    for (int w : widths) rope_stride_ += w;
  }
  const int n = std::max(npos, std::min(2 * rope_npos_, npos + 4096));  // grow geometrically, boundedly
  if (rope_stride_ > 0 && !rope_tab_.reserve(size_t(n) * rope_stride_))
    return Status::OutOfMemory("rope", double(size_t(n) * rope_stride_ * sizeof(float)), "RoPE cos/sin table");
  float* t = rope_tab_.data();
  for (int i = 0; i < r.num_heads; ++i) {
    const int w = r.rope_width(i), col = rope_col_[i];
    if (std::find(rope_col_.begin(), rope_col_.begin() + i, col) != rope_col_.begin() + i) continue;  // filled already
    for (int p = 0; p < w / 2; ++p) {
      const double f = std::pow(double(r.rope_base), -2.0 * p / w);  // θ^(−2p/w)
      for (int pos = 0; pos < n; ++pos) {
        const double ang = double(pos) * f;
        t[size_t(pos) * rope_stride_ + col + p] = float(std::cos(ang));
        t[size_t(pos) * rope_stride_ + col + w / 2 + p] = float(std::sin(ang));
      }
    }
  }
  rope_npos_ = n;
  return Status::Ok();
}

Status Layer::rotate(bool keys, float* x, int ld, int rows, int pos0) {
  const Resolved& r = cfg_;
  if (!r.has_rope() || rows <= 0) return Status::Ok();
  Status s = ensure_rope_table(pos0 + rows);
  if (!s.ok()) return s;
  const int nh = keys ? r.kv_heads : r.num_heads, group = r.num_heads / r.kv_heads;
  const bool inter = r.rope_interleaved;
  for (int rr = 0; rr < rows; ++rr) {
    float* row = x + size_t(rr) * ld;
    const float* tab = rope_tab_.data() + size_t(pos0 + rr) * rope_stride_;
    for (int hh = 0; hh < nh; ++hh) {
      const int head = keys ? hh * group : hh, w = r.rope_width(head), half = w / 2;
      float* v = row + (keys ? r.k_off[hh] : r.q_off[hh]);
      const float* cs = tab + rope_col_[head];  // cos of the half pairs, then their sin
      const float* sns = cs + half;
      if (inter) {
        for (int p = 0; p < half; ++p) {
          const float c = cs[p], sn = sns[p], a = v[2 * p], b = v[2 * p + 1];
          v[2 * p] = a * c - b * sn;
          v[2 * p + 1] = a * sn + b * c;
        }
      } else {
        for (int p = 0; p < half; ++p) {  // contiguous: vectorizes
          const float c = cs[p], sn = sns[p], a = v[p], b = v[p + half];
          v[p] = a * c - b * sn;
          v[p + half] = a * sn + b * c;
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace mha
