// A test double for a library with a large thread-local storage block, as
// OpenBLAS has (60 KB): preloaded into `dvfslab exporter`, it leaves no room in a
// 100 KB thread stack, such as civetweb, the exporter's former HTTP server, gave
// its threads.
extern "C" char* big_thread_storage();

namespace {
thread_local char storage_of_every_thread[96 * 1024];
}  // namespace

extern "C" char* big_thread_storage() { return storage_of_every_thread; }
