// hipRTC (HIP 5.2) compile check: hiprtc_check <kernels dir> <tu>... ; headers passed in memory.
#include <hip/hiprtc.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iostream>
#include <vector>
#include <string>
static std::string slurp(const std::filesystem::path& p) { std::ifstream f(p); std::stringstream s; s << f.rdbuf(); return s.str(); }
int main(int argc, char** argv) {
  std::vector<std::string> names, texts;
  for (auto& e : std::filesystem::directory_iterator(argv[1])) { names.push_back(e.path().filename()); texts.push_back(slurp(e.path())); }
  std::vector<const char*> np, tp; for (size_t i = 0; i < names.size(); ++i) { np.push_back(names[i].c_str()); tp.push_back(texts[i].c_str()); }
  int fails = 0;
  for (int a = 2; a < argc; ++a) {
    std::string src = slurp(argv[a]); hiprtcProgram prog;
    hiprtcCreateProgram(&prog, src.c_str(), argv[a], (int)np.size(), tp.data(), np.data());
    const char* opts[] = {"--offload-arch=gfx90a", "-std=c++17", "-O3"};
    hiprtcResult r = hiprtcCompileProgram(prog, 3, opts);
    size_t n = 0; size_t code = 0; hiprtcGetProgramLogSize(prog, &n); std::string log(n, '\0'); if (n) hiprtcGetProgramLog(prog, log.data());
    if (r == HIPRTC_SUCCESS) hiprtcGetCodeSize(prog, &code);
    std::cout << std::filesystem::path(argv[a]).stem().string() << (r == HIPRTC_SUCCESS ? " OK code=" + std::to_string(code) : " FAIL") << "\n";
    if (r != HIPRTC_SUCCESS) { ++fails; std::cout << log.substr(0, 2000) << "\n"; }
    if (r == HIPRTC_SUCCESS && argc == 3) { std::vector<char> c(code); hiprtcGetCode(prog, c.data()); std::ofstream("/tmp/kc/gfx90a.co", std::ios::binary).write(c.data(), code); }
    hiprtcDestroyProgram(&prog);
  }
  return fails;
}
