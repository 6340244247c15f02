// A test double for a library that starts a thread when it is loaded, before main,
// as OpenBLAS's pthread build does when LibTorch loads it: preloaded into the
// daemon (LD_PRELOAD), its thread is one that blocks no signal.
#include <pthread.h>
#include <unistd.h>

namespace {

void* wait_forever(void*) {
  for (;;) ::pause();
}

__attribute__((constructor)) void start_thread_at_load() {
  pthread_t thread;
  if (::pthread_create(&thread, nullptr, wait_forever, nullptr) == 0) ::pthread_detach(thread);
}

}  // namespace
