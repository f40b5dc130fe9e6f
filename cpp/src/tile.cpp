// The GEMM register tile (mha/tile.hpp): the public switch over the SIMD kernels' tile rows.
#include "mha/tile.hpp"

#include "kernels.hpp"

namespace mha {

#ifdef MHA_SIMD128
int set_gemm_tile_rows(int rows) {
  kernels::set_tile_rows(rows);
  return kernels::tile_rows();
}
int gemm_tile_rows() { return kernels::tile_rows(); }
#else
int set_gemm_tile_rows(int) { return 0; }  // the portable Eigen products have no register tile of ours
int gemm_tile_rows() { return 0; }
#endif

}  // namespace mha
