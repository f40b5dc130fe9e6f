// Deterministic replay of a corpus through the fuzz target's entry point (cpp/fuzz/fuzz_mha.cpp),
// for CI: files or directories given as arguments, no libFuzzer, no mutation, every file once, in
// sorted order. Prints "replayed N inputs"; exits 1 when there was none. Linked into replay_mha.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static int replay_path(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) { std::fprintf(stderr, "cannot stat %s\n", path.c_str()); std::exit(2); }
  if (S_ISDIR(st.st_mode)) {
    std::vector<std::string> names;
    if (DIR* d = opendir(path.c_str())) {
      while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') names.push_back(e->d_name);
      closedir(d);
    }
    std::sort(names.begin(), names.end());
    int n = 0;
    for (const auto& nm : names) n += replay_path(path + "/" + nm);
    return n;
  }
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  return 1;
}

int main(int argc, char** argv) {
  int n = 0;
  for (int i = 1; i < argc; ++i) n += replay_path(argv[i]);
  std::printf("replayed %d inputs\n", n);
  return n > 0 ? 0 : 1;
}
