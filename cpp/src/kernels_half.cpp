// 16-bit packed weights (kernels.hpp: pack_b_slices16, pack_b_t16, packed_column16), the same in
// every implementation: panels of kPanel columns (row k of panel p at p·kPanel·K + k·kPanel,
// column j of a panel at half_lane(j) of its row, columns past N zero), 16-bit values as given
// (float16 or bfloat16 bits; PackedB::half says which).
#include <algorithm>

#include "half.hpp"
#include "kernels.hpp"

namespace mha {
namespace kernels {

void pack_b_slices16(int K, int N, int half, std::initializer_list<ColumnSlice16> slices, PackedB& out) {
  out.k = K;
  out.n = N;
  out.half = half;
  out.data.clear();
  out.bits.assign(panels_size(K, N), 0);
  const size_t stride = size_t(kPanel) * K;
  for (const ColumnSlice16& blk : slices)
    for (int k = 0; k < K; ++k) {  // row by row: contiguous reads, 8 contiguous writes per panel
      const uint16_t* src = blk.b + size_t(k) * blk.ld;
      uint16_t* dst = out.bits.data() + size_t(k) * kPanel;
      for (int c = 0; c < blk.n; ++c) {
        const int col = blk.n0 + c;
        dst[size_t(col / kPanel) * stride + half_lane(col % kPanel)] = src[c];
      }
    }
}

void pack_b_t16(int K, int N, int half, const uint16_t* Bt, int ldbt, PackedB& out) {
  out.k = K;
  out.n = N;
  out.half = half;
  out.data.clear();
  out.bits.assign(panels_size(K, N), 0);
  const size_t stride = size_t(kPanel) * K;
  for (int col = 0; col < N; ++col) {  // row col of Bt is column col of B: contiguous reads
    uint16_t* dst = out.bits.data() + size_t(col / kPanel) * stride + half_lane(col % kPanel);
    const uint16_t* src = Bt + size_t(col) * ldbt;
    for (int k = 0; k < K; ++k) dst[size_t(k) * kPanel] = src[k];
  }
}

void packed_column16(const PackedB& B, int n, float* out) {
  const uint16_t* p = B.bits.data() + size_t(n / kPanel) * kPanel * B.k + half_lane(n % kPanel);
  for (int k = 0; k < B.k; ++k) out[k] = half_to_float(p[size_t(k) * kPanel], B.half);
}

}  // namespace kernels
}  // namespace mha
