// A LibTorch module of another dvfslab build, as a partial upgrade leaves one beside
// the executable: it names a build this dvfslab is not. The run-workload tests put it
// where the real module belongs and expect dvfslab to refuse it before any call.
extern "C" __attribute__((visibility("default"))) const char* dvfslab_module_build() {
  return "0.0.1+0000000000000000";
}
