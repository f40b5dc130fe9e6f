// libFuzzer target over the C++ core: a byte-decoded configuration, weights, inputs and
// masks drive mha::resolve / mha::passport / mha::Layer::create / Layer::forward (with and
// without weights, averaged, traced) and mha::KVCache (steps, overflow of max_len, reset).
//
// The layer options of mha::Config (score modifiers, RoPE) are decoded from one byte after the configuration
// (0 = none, so the inputs from before them keep their meaning): soft-capping, ALiBi (the paper's
// slopes or given ones), a sliding window, RoPE (both layouts, rotary_dim, θ), with valid and invalid
// values (caps ≤ 0 / NaN / ∞, slopes of the wrong count or not finite, windows < −1 or huge, odd or
// oversized rotary_dim, θ ≤ 1 / NaN). An invalid one is kInvalidConfig from resolve(), passport()
// and Layer::create() alike, naming the field; a valid one runs every path below, against the
// reference, which applies them too.
//
// Built with clang -fsanitize=fuzzer,address,undefined by scripts/fuzz.sh; the same entry point,
// linked with replay_main.cpp, is the deterministic corpus replayer (`scripts/fuzz.sh --replay`).
// The reader, value generator, contract checks and option decoder: fuzz_support.hpp.
//
// Beyond memory errors and UB, every call is checked against the contract (a violation traps):
//  - the status code is one of the documented ones;
//  - a config that resolve() accepts with finite weights creates a layer; NaN/Inf weights give
//    kNonFinite; NaN/Inf in query/key/value, NaN/+Inf in an additive mask give kNonFinite;
//  - a successful call returns no NaN/Inf: output finite, weights in [0, 1] with rows summing to
//    1 (or all 0 for a row whose keys are all masked); otherwise kNonFinite "float32 overflow",
//    which is allowed only when some value is large (|x| ≥ 2^16);
//  - with tame values the output and weights (and a trace's Q, K and scores) match the float64
//    reference written from the formula (cpp/tests/support/reference_mha.hpp, shared with the unit
//    tests: Vaswani et al. 2017, eq. 1; masks as torch.nn.MultiheadAttention; grouped-query heads;
//    RoPE, soft-cap, ALiBi and window from their papers);
//  - a KV cache fed the sequence in chunks gives the rows of one causal forward of the whole
//    sequence (its own code path against the one-shot one, RoPE at the cache's positions), with step
//    weights that are causal rows summing to 1 and 0 outside the window; a step past max_len or with NaN is refused and leaves length() unchanged.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "fuzz_support.hpp"
#include "mha/attention.hpp"
#include "mha/config.hpp"
#include "mha/kv_cache.hpp"
#include "support/reference_mha.hpp"

namespace {

using namespace fuzz;

/// One fuzz input through the core, every call checked against the contract (see above).
void run(const uint8_t* data, size_t size) {
  Reader rd{data, size};
  ValueGen wgen{rd}, xgen{rd};

  // ---- configuration ----
  const uint8_t mode = rd.u8();
  mha::Config c;
  if (mode & 0x80) {
    // Wild: raw 32-bit fields straight into resolve() and passport(); nothing is allocated.
    c.d_model = rd.i32(); c.num_heads = rd.i32(); c.kv_heads = rd.i32(); c.d_k = rd.i32();
    c.d_v = rd.i32(); c.k_dim = rd.i32(); c.v_dim = rd.i32(); c.bias = rd.bit();
    uint32_t bits = uint32_t(rd.i32());
    std::memcpy(&c.scale, &bits, 4);
    if (rd.bit()) {
      const int n = rd.range(0, 9);
      for (int i = 0; i < n; ++i) { c.head_dk.push_back(rd.i32()); c.head_dv.push_back(rd.i32()); }
      if (rd.bit() && !c.head_dv.empty()) c.head_dv.pop_back();
    }
    bool huge = false;
    decode_options(rd, c, true, huge);
    mha::Resolved res;
    mha::Status s = mha::resolve(c, res);
    check_code(s);
    if (s.ok()) {
      CHECK(res.q_width >= 1 && res.k_width >= 1 && res.v_width >= 1 && res.o_width >= 1);
      CHECK(int64_t(res.d_model) * res.q_width < (int64_t(1) << 31));
    } else {
      CHECK(s.code == mha::Code::kInvalidConfig, s.message);
    }
    mha::Passport p;
    s = mha::passport(c, rd.i32(), rd.i32(), rd.i32(), p);
    check_code(s);
    if (s.ok()) CHECK(std::isfinite(p.flops.total) && p.flops.total >= 0 && p.params.total > 0);
    return;
  }
  const bool per_head = mode & 1;
  c.bias = mode & 2;
  const bool cross = mode & 4;
  c.d_model = rd.range(1, 48);
  c.num_heads = rd.range(1, 8);
  if (per_head) {
    c.kv_heads = rd.bit() ? c.num_heads : 0;
    for (int i = 0; i < c.num_heads; ++i) { c.head_dk.push_back(rd.range(1, 8)); c.head_dv.push_back(rd.range(1, 8)); }
  } else {
    std::vector<int> divs;
    for (int g = 1; g <= c.num_heads; ++g) if (c.num_heads % g == 0) divs.push_back(g);
    c.kv_heads = (mode & 8) ? rd.range(0, 8) : divs[rd.u8() % divs.size()];  // may not divide
    c.d_k = (mode & 16) ? rd.range(1, 16) : 0;  // 0: d_model / h, must divide
    c.d_v = rd.bit() ? rd.range(1, 16) : 0;
  }
  if (cross) { c.k_dim = rd.range(1, 24); c.v_dim = rd.range(1, 24); }
  if (mode & 32) c.scale = float(rd.range(1, 64)) / 16.f;
  bool opts_huge = false;  // a valid option value that may overflow float32 scores
  decode_options(rd, c, false, opts_huge);

  mha::Resolved r;
  mha::Status s = mha::resolve(c, r);
  check_code(s);
  if (!s.ok()) {
    CHECK(s.code == mha::Code::kInvalidConfig, s.message);
    CHECK(!s.argument.empty(), s.render());
    // passport() and Layer::create() refuse it alike (create before it reads any weight).
    mha::Passport p;
    const mha::Status ps = mha::passport(c, 3, 0, 0, p);
    CHECK(ps.code == mha::Code::kInvalidConfig && ps.argument == s.argument, ps.render() + " vs " + s.render());
    std::unique_ptr<mha::Layer> none;
    const mha::Status cs = mha::Layer::create(c, mha::WeightsView{}, none);
    CHECK(cs.code == mha::Code::kInvalidConfig && cs.argument == s.argument && !none, cs.render() + " vs " + s.render());
    return;
  }

  // ---- weights ----
  wgen.special = (mode & 64) ? rd.u8() : 0;
  std::vector<float> wq(size_t(r.d_model) * r.q_width), wk(size_t(r.k_dim) * r.k_width),
      wv(size_t(r.v_dim) * r.v_width), wo(size_t(r.o_width) * r.d_model), bq, bk, bv, bo;
  wgen.fill(wq); wgen.fill(wk); wgen.fill(wv); wgen.fill(wo);
  if (r.bias) {
    bq.resize(r.q_width); bk.resize(r.k_width); bv.resize(r.v_width); bo.resize(r.d_model);
    wgen.fill(bq); wgen.fill(bk); wgen.fill(bv); wgen.fill(bo);
  }
  mha::WeightsView wvw;
  wvw.wq = wq.data(); wvw.wk = wk.data(); wvw.wv = wv.data(); wvw.wo = wo.data();
  if (r.bias) { wvw.bq = bq.data(); wvw.bk = bk.data(); wvw.bv = bv.data(); wvw.bo = bo.data(); }
  std::unique_ptr<mha::Layer> layer;
  s = mha::Layer::create(c, wvw, layer);
  check_code(s);
  if (wgen.saw_nonfinite) { CHECK(s.code == mha::Code::kNonFinite, s.message); return; }
  CHECK(s.ok(), s.message);

  // ---- one or two forwards ----
  const int nforward = rd.range(1, 2);
  for (int f = 0; f < nforward; ++f) {
    const uint8_t fm = rd.u8();
    const int B = rd.range(1, 3);
    const int Tq = (fm & 1) ? rd.range(1, 80) : rd.range(1, 12);
    // fm & 64 adds 400 keys: 401..755 crosses the streaming path's key tile of 512.
    int Tk = cross ? ((fm & 2) ? rd.range(1, 255) + rd.range(0, 100) + ((fm & 64) ? 400 : 0) : rd.range(1, 12)) : Tq;
    xgen.special = (fm & 4) ? rd.u8() : 0;
    xgen.saw_nonfinite = xgen.saw_large = false;
    std::vector<float> q(size_t(B) * Tq * r.d_model), k, v;
    xgen.fill(q);
    if (cross) { k.resize(size_t(B) * Tk * r.k_dim); v.resize(size_t(B) * Tk * r.v_dim); xgen.fill(k); xgen.fill(v); }
    const bool input_bad = xgen.saw_nonfinite;
    const bool causal = fm & 8;
    std::vector<uint8_t> kpm;
    // Byte 0 (also every read past the input's end) means "not masked", so a short input does
    // not turn into an all-masked layer whose output is 0 whatever the code computes.
    std::vector<float> kpm_add;  // fm & 32: the additive form (-inf from byte 192; NaN / +inf with fm & 4)
    bool kpm_bad = false;
    if ((fm & 16) && !(fm & 32)) { kpm.resize(size_t(B) * Tk); for (auto& x : kpm) x = rd.u8() >= 192; }
    if ((fm & 16) && (fm & 32)) {
      kpm_add.resize(size_t(B) * Tk);
      for (float& m : kpm_add) {
        const uint8_t b = rd.u8();
        m = b >= 192 ? -kInf : b >= 188 && (fm & 4) ? std::numeric_limits<float>::quiet_NaN() : b >= 186 && (fm & 4) ? kInf
                                                                                                        : float(int(b % 9) - 4);
        if (std::isnan(m) || m == kInf) kpm_bad = true;
      }
    }
    mha::MaskKind kind = mha::MaskKind(rd.range(0, 2));
    std::vector<float> mask;
    bool mask_bad = false;
    if (kind != mha::MaskKind::kNone) {
      mask.resize((kind == mha::MaskKind::kShared ? size_t(1) : size_t(B) * r.num_heads) * Tq * Tk);
      for (float& m : mask) {
        const uint8_t b = rd.u8();
        m = b >= 208 ? -kInf : b >= 204 && (fm & 4) ? std::numeric_limits<float>::quiet_NaN() : b >= 202 && (fm & 4) ? kInf
                                                                                                         : float(int(b % 17) - 8);
        if (std::isnan(m) || m == kInf) mask_bad = true;
      }
    }
    const int wmode = rd.range(0, 3);  // 0 none, 1 per head, 2 averaged, 3 trace (per head)
    std::vector<float> out(size_t(B) * Tq * r.d_model, 7.f);
    std::vector<float> w(wmode == 0 ? 0 : wmode == 2 ? size_t(B) * Tq * Tk : size_t(B) * r.num_heads * Tq * Tk, 7.f);
    std::vector<float> tq, tk, tv, ts, tc;
    mha::ForwardArgs a;
    a.batch = B; a.tq = Tq; a.tk = cross ? Tk : 0;
    a.query = q.data();
    if (cross) { a.key = k.data(); a.value = v.data(); }
    a.causal = causal;
    a.key_padding_mask = kpm.empty() ? nullptr : kpm.data();
    a.key_padding_add = kpm_add.empty() ? nullptr : kpm_add.data();
    a.attn_mask = mask.empty() ? nullptr : mask.data();
    a.attn_mask_kind = kind;
    a.output = out.data();
    a.weights = w.empty() ? nullptr : w.data();
    a.average_weights = wmode == 2;
    if (wmode == 3) {
      tq.resize(size_t(B) * Tq * r.q_width); tk.resize(size_t(B) * Tk * r.k_width); tv.resize(size_t(B) * Tk * r.v_width);
      ts.resize(size_t(B) * r.num_heads * Tq * Tk); tc.resize(size_t(B) * Tq * r.o_width);
      a.trace.q = tq.data(); a.trace.k = tk.data(); a.trace.v = tv.data(); a.trace.scores = ts.data(); a.trace.concat = tc.data();
    }
    s = layer->forward(a);
    check_code(s);
    if (input_bad || mask_bad || kpm_bad) { CHECK(s.code == mha::Code::kNonFinite, s.message); continue; }
    if (!s.ok()) {
      // The only other failure a valid call may see is float32 overflow from large values.
      CHECK(s.code == mha::Code::kNonFinite && s.message.find("overflow") != std::string::npos, s.message);
      CHECK(xgen.saw_large || wgen.saw_large || opts_huge, s.message);
      continue;
    }
    CHECK(all_finite(out), "output");
    const int h = r.num_heads;
    const int rows = wmode == 2 ? B * Tq : B * h * Tq;
    if (wmode) {
      for (int row = 0; row < rows; ++row) {
        double sum = 0;
        for (int j = 0; j < Tk; ++j) {
          const float x = w[size_t(row) * Tk + j];
          CHECK(x >= 0.f && x <= 1.f + 1e-6f, "weight " + std::to_string(x));
          sum += x;
        }
        // A row sums to 1, or to 0 when all its keys are masked; averaged over h heads: m/h.
        const double units = wmode == 2 ? sum * h : sum;
        CHECK(std::fabs(units - std::round(units)) < 1e-3 * h && units <= (wmode == 2 ? h : 1) + 1e-3,
              "row sum " + std::to_string(sum));
      }
    }
    // Float64 reference when every value is tame (|x| ≤ 1 weights/inputs, masks ≥ -8).
    if (!xgen.saw_large && !wgen.saw_large && !xgen.special && !wgen.special && !opts_huge) {
      mha_test::ReferenceInput in;
      in.batch = B; in.tq = Tq; in.tk = Tk;
      in.query = q.data(); in.key = cross ? k.data() : q.data(); in.value = cross ? v.data() : q.data();
      in.causal = causal;
      in.key_padding_mask = kpm.empty() ? nullptr : kpm.data();
      in.key_padding_add = kpm_add.empty() ? nullptr : kpm_add.data();
      in.attn_mask = mask.empty() ? nullptr : mask.data();
      in.attn_mask_kind = kind;
      const mha_test::ReferenceResult ref = mha_test::reference_mha(r, wvw, in);
      const double wtol = 1e-4 + 1e-6 * ref.max_score;
      const double otol = 1e-4 * (1 + max_abs(ref.output));
      for (size_t i = 0; i < out.size(); ++i)
        CHECK(std::fabs(out[i] - ref.output[i]) <= otol, "output[" + std::to_string(i) + "] " +
                                                             std::to_string(out[i]) + " vs " + std::to_string(ref.output[i]));
      if (wmode == 1 || wmode == 3)
        for (size_t i = 0; i < w.size(); ++i)
          CHECK(std::fabs(w[i] - ref.weights[i]) <= wtol, "weights[" + std::to_string(i) + "]");
      if (wmode == 2)
        for (int row = 0; row < B * Tq; ++row)
          for (int j = 0; j < Tk; ++j) {
            const int b = row / Tq, t = row % Tq;
            double m = 0;
            for (int i = 0; i < h; ++i) m += ref.weights[((size_t(b) * h + i) * Tq + t) * Tk + j] / h;
            CHECK(std::fabs(w[size_t(row) * Tk + j] - m) <= wtol, "averaged weights");
          }
      if (wmode == 3) {  // the trace: Q and K after RoPE, the scores after soft-cap and ALiBi
        auto near = [](const std::vector<float>& got, const std::vector<double>& want, double tol, const char* what) {
          CHECK(got.size() == want.size(), what);
          for (size_t i = 0; i < got.size(); ++i)
            CHECK(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])),
                  std::string(what) + "[" + std::to_string(i) + "] " + std::to_string(got[i]) + " vs " + std::to_string(want[i]));
        };
        near(tq, ref.q, 1e-5 * (1 + max_abs(ref.q)), "trace.q");
        near(tk, ref.k, 1e-5 * (1 + max_abs(ref.k)), "trace.k");
        near(ts, ref.scores, 1e-5 * (1 + ref.max_score), "trace.scores");
      }
    }
  }

  // ---- KV cache: chunks of the sequence reproduce causal self-attention ----
  if (cross) return;
  const int B = rd.range(1, 2), max_len = rd.range(1, 40);
  std::unique_ptr<mha::KVCache> cache;
  s = mha::KVCache::create(layer.get(), max_len, B, cache);
  check_code(s);
  CHECK(s.ok(), s.message);
  const int total = rd.range(1, max_len);
  xgen.special = 0;
  xgen.saw_large = false;
  std::vector<float> x(size_t(B) * total * r.d_model);
  xgen.fill(x);
  std::vector<float> full(size_t(B) * total * r.d_model);
  mha::ForwardArgs a;
  a.batch = B; a.tq = total; a.query = x.data(); a.causal = true; a.output = full.data();
  s = layer->forward(a);
  check_code(s);
  if (!s.ok()) { CHECK(s.code == mha::Code::kNonFinite && (wgen.saw_large || opts_huge), s.message); return; }
  for (int pass = 0; pass < 2; ++pass) {  // the second pass runs after reset()
    int at = 0;
    while (at < total) {
      const int n = std::min(total - at, rd.range(1, 8));
      std::vector<float> chunk(size_t(B) * n * r.d_model), out(chunk.size()), w(size_t(B) * r.num_heads * n * (at + n));
      for (int b = 0; b < B; ++b)
        std::memcpy(&chunk[size_t(b) * n * r.d_model], &x[(size_t(b) * total + at) * r.d_model], sizeof(float) * n * r.d_model);
      if (rd.u8() < 16) {  // a NaN token is refused and changes nothing
        std::vector<float> bad = chunk;
        bad[bad.size() / 2] = std::numeric_limits<float>::quiet_NaN();
        s = cache->step(bad.data(), n, out.data(), nullptr);
        CHECK(s.code == mha::Code::kNonFinite && cache->length() == at, s.message);
      }
      const bool want_w = rd.bit();
      s = cache->step(chunk.data(), n, out.data(), want_w ? w.data() : nullptr);
      check_code(s);
      if (!s.ok()) { CHECK(s.code == mha::Code::kNonFinite && (wgen.saw_large || opts_huge), s.message); return; }
      CHECK(cache->length() == at + n);
      if (want_w)  // [B, h, n, at + n]: query i sees keys 0 .. at + i of its window only, and its row sums to 1
        for (int row = 0; row < B * r.num_heads * n; ++row) {
          const int i = row % n;
          const int64_t lo = r.window_left >= 0 ? int64_t(at) + i - r.window_left : 0;
          double sum = 0;
          for (int j = 0; j < at + n; ++j) {
            const float x = w[size_t(row) * (at + n) + j];
            CHECK(x >= 0.f && x <= 1.f + 1e-6f && ((j <= at + i && j >= lo) || x == 0.f), "step weight " + std::to_string(x));
            sum += x;
          }
          CHECK(std::fabs(sum - 1) < 1e-3, "step weights row sum " + std::to_string(sum));
        }
      if (!wgen.saw_large && !wgen.special)
        for (int b = 0; b < B; ++b)
          for (size_t i = 0; i < size_t(n) * r.d_model; ++i) {
            const float got = out[size_t(b) * n * r.d_model + i], want = full[(size_t(b) * total + at) * r.d_model + i];
            CHECK(std::fabs(got - want) <= 1e-3f * (1.f + std::fabs(want)), "cache step vs forward");
          }
      at += n;
    }
    // Past max_len: refused, length unchanged.
    if (at == max_len) {
      std::vector<float> one(size_t(B) * r.d_model, 0.25f), o1(one.size());
      s = cache->step(one.data(), 1, o1.data(), nullptr);
      CHECK(s.code == mha::Code::kInvalidArgument && cache->length() == at, s.message);
    }
    cache->reset();
    CHECK(cache->length() == 0);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  run(data, size);
  return 0;
}
