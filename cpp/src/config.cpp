// Configuration validation and the shape passport (parameter and FLOP counts).
#include "mha/config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace mha {
namespace {
/// kInvalidConfig naming `argument` (message tokens: see mha/status.hpp).
Status invalid(const char* argument, const std::string& m) { return Status::Error(Code::kInvalidConfig, m, argument); }
std::string str(int64_t v) { return std::to_string(v); }
/// A float as JS prints it for the usual values (shortest of %.9g), "NaN", "Infinity".
std::string num(float v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[32];
  if (v == std::floor(v) && std::fabs(v) < 1e15f) {  // integers as JS prints them: -10, not -1e+01
    std::snprintf(buf, sizeof buf, "%.0f", double(v));
    return buf;
  }
  for (int p = 1; p <= 9; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, double(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

/// The head counts, the K/V input widths and the scale: kInvalidConfig for d_model < 1, num_heads
/// outside [1, kMaxHeads], kv_heads < 1 or not dividing num_heads, negative k_dim / v_dim, a scale
/// that is negative or not finite. Checked in this order (the first failure is reported).
Status check_shape(const Config& c) {
  if (c.d_model < 1) return invalid("d_model", "{d_model} must be a positive integer, got " + str(c.d_model));
  if (c.num_heads < 1) return invalid("num_heads", "{num_heads} must be a positive integer, got " + str(c.num_heads));
  // resolve() allocates per-head tables (~40 bytes per head) before the weight-size check:
  // without this bound, numHeads = 2^31 - 1 with dK = 1 passes that check and its allocation aborts
  // the wasm instance (a case cpp/fuzz found). Bound h up front.
  if (c.num_heads > kMaxHeads)
    return invalid("num_heads", "{num_heads} must be at most " + str(kMaxHeads) + ", got " + str(c.num_heads));
  const int h = c.num_heads;
  const int g = c.kv_heads == 0 ? h : c.kv_heads;
  if (g < 1) return invalid("kv_heads", "{kv_heads} must be a positive integer, got " + str(c.kv_heads));
  if (h % g != 0)
    return invalid("kv_heads", "{kv_heads} must divide {num_heads} (" + str(h) + "), got {kv_heads} = " + str(g));
  if (c.k_dim < 0) return invalid("k_dim", "{k_dim} must be a positive integer, got " + str(c.k_dim));
  if (c.v_dim < 0) return invalid("v_dim", "{v_dim} must be a positive integer, got " + str(c.v_dim));
  if (!(c.scale >= 0.f) || !std::isfinite(c.scale))
    return invalid("scale", "{scale} must be a finite positive number, got " + std::to_string(c.scale));
  return Status::Ok();
}

/// Fills r.dk and r.dv (one d_k and one d_v per query head, h = r.num_heads, g = r.kv_heads) from
/// the per-head lists head_dk / head_dv, or else from d_k (default d_model / h) and d_v (default
/// d_k). kInvalidConfig for lists not of size h, per-head lists with g != h, d_model not divisible
/// by h when d_k is not given, or any width < 1.
Status resolve_head_dims(const Config& c, Resolved& r) {
  const int h = r.num_heads, g = r.kv_heads;
  if (!c.head_dk.empty() || !c.head_dv.empty()) {
    if (static_cast<int>(c.head_dk.size()) != h || static_cast<int>(c.head_dv.size()) != h)
      return invalid("head_dims", "{head_dims}: expected " + str(h) + " d_k and d_v values (one per head), got " +
                     str(c.head_dk.size()) + " and " + str(c.head_dv.size()));
    if (g != h) return invalid("kv_heads", "per-head weights need {kv_heads} = {num_heads} (" + str(h) + "), got " + str(g));
    r.dk = c.head_dk;
    r.dv = c.head_dv;
  } else {
    int dk = c.d_k;
    if (dk == 0) {
      if (c.d_model % h != 0)
        return invalid("num_heads", "{num_heads} must divide {d_model} when {d_k} is not given: {d_model} = " + str(c.d_model) +
                       " is not divisible by {num_heads} = " + str(h));
      dk = c.d_model / h;
    }
    if (dk < 1) return invalid("d_k", "{d_k} must be a positive integer, got " + str(c.d_k));
    const int dv = c.d_v ? c.d_v : dk;
    if (dv < 1) return invalid("d_v", "{d_v} must be a positive integer, got " + str(c.d_v));
    r.dk.assign(h, dk);
    r.dv.assign(h, dv);
  }
  for (int i = 0; i < h; ++i) {
    if (r.dk[i] < 1) return invalid("head_dims", "head " + str(i) + ": d_k must be ≥ 1, got " + str(r.dk[i]));
    if (r.dv[i] < 1) return invalid("head_dims", "head " + str(i) + ": d_v must be ≥ 1, got " + str(r.dv[i]));
  }
  return Status::Ok();
}

/// From r.dk / r.dv: the per-head scales (c.scale, or 1/√d_k when it is 0), the column offsets of
/// every query and kv head (kv head j takes the widths of query head j·h/g), and the four packed
/// widths. kInvalidConfig when a weight matrix would hold 2^31 elements or more (sums and products
/// in 64-bit to catch the overflow).
Status lay_out_heads(const Config& c, Resolved& r) {
  const int h = r.num_heads, g = r.kv_heads;
  int64_t q = 0, o = 0;
  for (int i = 0; i < h; ++i) {
    r.q_off.push_back(static_cast<int>(q));
    r.o_off.push_back(static_cast<int>(o));
    q += r.dk[i];
    o += r.dv[i];
    r.scale.push_back(c.scale > 0.f ? c.scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(r.dk[i]))));
  }
  const int rep = h / g;
  int64_t k = 0, v = 0;
  for (int j = 0; j < g; ++j) {
    r.k_off.push_back(static_cast<int>(k));
    r.v_off.push_back(static_cast<int>(v));
    r.kv_dk.push_back(r.dk[j * rep]);
    r.kv_dv.push_back(r.dv[j * rep]);
    k += r.dk[j * rep];
    v += r.dv[j * rep];
  }
  const int64_t lim = int64_t(1) << 31;
  const int64_t dm = r.d_model;
  if (q >= lim || o >= lim || dm * q >= lim || int64_t(r.k_dim) * k >= lim ||
      int64_t(r.v_dim) * v >= lim || o * dm >= lim)
    return invalid("weights", "weights too large: d_model = " + str(dm) + ", h·d_k = " + str(q) +
                   " give more than 2^31 elements in one matrix");
  r.q_width = static_cast<int>(q);
  r.o_width = static_cast<int>(o);
  r.k_width = static_cast<int>(k);
  r.v_width = static_cast<int>(v);
  return Status::Ok();
}

/// The score modifiers of `c` for h query heads, into r: softcap (finite, > 0 when on), ALiBi
/// slopes (one finite slope per query head when given, else alibi_default_slopes(h)) and the
/// sliding window (left and right ≥ −1). kInvalidConfig for the first that fails, in that order.
Status resolve_score_mods(const Config& c, int h, Resolved& r) {
  if (c.softcap_on && !(c.softcap > 0.f && std::isfinite(c.softcap)))
    return invalid("softcap", "{softcap} must be a finite number > 0 (the cap of cap·tanh(scores / cap)), got " +
                   num(c.softcap));
  if (c.alibi && c.alibi_given) {
    if (static_cast<int64_t>(c.alibi_slopes.size()) != h)
      return invalid("alibi_slopes", "{alibi_slopes} must hold one slope per query head: expected {num_heads} = " + str(h) +
                     " slopes, got " + str(static_cast<int64_t>(c.alibi_slopes.size())));
    for (size_t i = 0; i < c.alibi_slopes.size(); ++i)
      if (!std::isfinite(c.alibi_slopes[i]))
        return invalid("alibi_slopes", "{alibi_slopes}[" + str(int64_t(i)) + "] must be a finite number, got " +
                       num(c.alibi_slopes[i]));
  }
  if (c.window_left < -1 || c.window_right < -1)
    return invalid("window", "{window} = [left, right] must hold integers ≥ 0 or −1 (unbounded), got [" +
                   str(c.window_left) + ", " + str(c.window_right) + "]");
  r.softcap = c.softcap_on ? c.softcap : 0.f;
  if (c.alibi) r.alibi_slopes = c.alibi_given ? c.alibi_slopes : alibi_default_slopes(h);
  r.window_left = c.window_left;
  r.window_right = c.window_right;
  return Status::Ok();
}

/// RoPE's settings into r when c.rope is on (r.dk filled): the rotary dimension (given: even, in
/// [0, smallest d_k]; not given: every d_k even, each head rotating its whole d_k) and the base
/// θ (finite, > 1). kInvalidConfig otherwise; nothing to do when RoPE is off.
Status resolve_rope(const Config& c, Resolved& r) {
  if (!c.rope) return Status::Ok();
  const int h = r.num_heads;
  int min_dk = r.dk[0];
  for (int i = 0; i < h; ++i) min_dk = std::min(min_dk, r.dk[i]);
  if (c.rope_dim != -1 && (c.rope_dim < 0 || c.rope_dim % 2 != 0 || c.rope_dim > min_dk))
    return invalid("rope.dim", "{rope.dim} (RoPE's rotary dimension) must be an even integer ≥ 0 and ≤ {d_k} = " + str(min_dk) +
                   ", got " + str(c.rope_dim));
  if (c.rope_dim == -1)
    for (int i = 0; i < h; ++i)
      if (r.dk[i] % 2 != 0)
        return invalid("rope.dim", "RoPE rotates pairs of dimensions and {d_k} = " + str(r.dk[i]) + " of head " + str(i) +
                       " is odd: give an even {rope.dim} < " + str(r.dk[i]));
  if (!(std::isfinite(c.rope_base) && c.rope_base > 1.f))
    return invalid("rope.base", "{rope.base} (RoPE's θ) must be a finite number > 1, got " + num(c.rope_base));
  r.rope_full = c.rope_dim == -1;
  r.rope_dim = r.rope_full ? min_dk : c.rope_dim;
  r.rope_base = c.rope_base;
  r.rope_interleaved = c.rope_interleaved;
  return Status::Ok();
}
}  // namespace

Status resolve(const Config& c, Resolved& r) {
  r = Resolved{};
  Status s = check_shape(c);
  if (!s.ok()) return s;
  r.d_model = c.d_model;
  r.num_heads = c.num_heads;
  r.kv_heads = c.kv_heads == 0 ? c.num_heads : c.kv_heads;
  r.k_dim = c.k_dim ? c.k_dim : c.d_model;
  r.v_dim = c.v_dim ? c.v_dim : c.d_model;
  r.bias = c.bias;
  // In this order, so that a configuration with several faults reports the same one as before.
  if (!(s = resolve_head_dims(c, r)).ok()) return s;
  if (!(s = lay_out_heads(c, r)).ok()) return s;
  if (!(s = resolve_score_mods(c, r.num_heads, r)).ok()) return s;
  return resolve_rope(c, r);
}

std::vector<float> alibi_default_slopes(int h) {
  std::vector<float> out;
  if (h < 1) return out;
  int n = 1;
  while (n * 2 <= h) n *= 2;  // the closest power of two ≤ h
  for (int i = 1; i <= n; ++i) out.push_back(static_cast<float>(std::pow(2.0, -8.0 * i / n)));
  // the rest: slopes 1, 3, 5, … (0-based: every other, starting at the first) of 2n heads
  for (int i = 1; static_cast<int>(out.size()) < h; i += 2)
    out.push_back(static_cast<float>(std::pow(2.0, -8.0 * i / (2 * n))));
  return out;
}

Status passport(const Config& c, int seq_len, int key_len, int batch, Passport& p) {
  Resolved r;
  Status s = resolve(c, r);
  if (!s.ok()) return s;
  if (seq_len < 1) return invalid("seq_len", "{seq_len} must be a positive integer, got " + str(seq_len));
  if (key_len < 0) return invalid("key_len", "{key_len} must be a positive integer, got " + str(key_len));
  if (batch < 0) return invalid("batch", "{batch} must be a positive integer, got " + str(batch));
  p = Passport{};
  const int64_t B = batch ? batch : 1, Tq = seq_len, Tk = key_len ? key_len : seq_len;
  const int64_t d = r.d_model, h = r.num_heads, g = r.kv_heads;
  p.d_k = r.dk[0];
  p.d_v = r.dv[0];
  auto sh = [&](std::vector<int64_t> dims) {
    if (batch) dims.insert(dims.begin(), B);
    return dims;
  };
  const int64_t dk = r.dk[0], dv = r.dv[0];
  const bool kv_shared = g != h;
  std::string scores_formula = "Q_i·K_iᵀ / √d_k";
  if (r.softcap > 0.f) scores_formula = "cap·tanh(" + scores_formula + " / cap)";
  if (!r.alibi_slopes.empty()) scores_formula += " − m_i·|i − j|";
  scores_formula = "S_i = " + scores_formula;
  if (r.has_window()) scores_formula += " (window: −∞ outside [i − left, i + right])";
  p.steps = {
      {"input X", sh({Tq, d}), "X"},
      {"split d_model into heads", sh({h, Tq, dk}), "X·W_Q → h × (T, d_k)"},
      {"per-head Q", sh({h, Tq, dk}), r.has_rope() ? "Q_i = RoPE(X·W_Q^(i))" : "Q_i = X·W_Q^(i)"},
      {"per-head K", sh({g, Tk, dk}), std::string(r.has_rope() ? "K_j = RoPE(X·W_K^(j))" : (kv_shared ? "K_j = X·W_K^(j)" : "K_i = X·W_K^(i)")) +
                                          (kv_shared ? ", shared by h/g query heads" : "")},
      {"per-head V", sh({g, Tk, dv}), kv_shared ? "V_j = X·W_V^(j), shared by h/g query heads" : "V_i = X·W_V^(i)"},
      {"per-head scores", sh({h, Tq, Tk}), scores_formula},
      {"per-head attention weights", sh({h, Tq, Tk}), "A_i = softmax(S_i)"},
      {"per-head outputs", sh({h, Tq, dv}), "head_i = A_i·V_i"},
      {"concat", sh({Tq, int64_t(r.o_width)}), "concat(head_1, …, head_h)"},
      {"W_O", {int64_t(r.o_width), d}, "W_O"},
      {"output", sh({Tq, d}), "concat·W_O"},
  };
  Params& pr = p.params;
  pr.wq_per_head = d * dk;
  pr.wq = d * r.q_width;
  pr.wk = int64_t(r.k_dim) * r.k_width;
  pr.wv = int64_t(r.v_dim) * r.v_width;
  pr.wo = int64_t(r.o_width) * d;
  pr.bias = r.bias ? int64_t(r.q_width) + r.k_width + r.v_width + d : 0;
  pr.total = pr.wq + pr.wk + pr.wv + pr.wo + pr.bias;
  pr.single_head_wq = d * r.q_width;
  Flops& f = p.flops;
  const double Bd = double(B), Tqd = double(Tq), Tkd = double(Tk);
  f.projections = 2.0 * Bd * (Tqd * d * r.q_width + Tkd * r.k_dim * r.k_width + Tkd * r.v_dim * r.v_width);
  f.scores = 2.0 * Bd * Tqd * Tkd * r.q_width;
  f.weighted = 2.0 * Bd * Tqd * Tkd * r.o_width;
  f.output = 2.0 * Bd * Tqd * r.o_width * d;
  f.score_mods = Bd * double(h) * Tqd * Tkd * ((r.softcap > 0.f ? 3.0 : 0.0) + (r.alibi_slopes.empty() ? 0.0 : 2.0));
  if (r.has_rope()) {
    double rq = 0, rk = 0;
    for (int i = 0; i < h; ++i) rq += r.rope_width(i);
    for (int j = 0; j < g; ++j) rk += r.rope_width(j * (h / g));
    f.rope = 3.0 * Bd * (Tqd * rq + Tkd * rk);
  }
  f.matmul = f.projections + f.scores + f.weighted + f.output;
  f.softmax = Bd * double(h) * Tqd * (6.0 * Tkd + 1.0);
  f.total = f.matmul + f.softmax + f.score_mods + f.rope;
  Memory& m = p.memory;
  m.scores = Bd * double(h) * Tqd * Tkd;
  m.score_bytes = 4.0 * m.scores;
  m.kv_cache = Bd * Tkd * (double(r.k_width) + double(r.v_width));
  m.kv_cache_bytes = 4.0 * m.kv_cache;
  return Status::Ok();
}

}  // namespace mha
