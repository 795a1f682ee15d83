/* LD_PRELOAD helper for scripts/gpu_check.sh on machines without gdb: on SIGSEGV, SIGBUS,
   SIGFPE, SIGILL or SIGABRT it writes the native backtrace (binary(+offset) frames, which
   gpu_check.sh resolves with addr2line) to stderr and re-raises the signal. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void on_signal(int sig) {
  void* frames[64];
  const int n = backtrace(frames, 64);
  const char* head = "\n== native backtrace (segv_backtrace.so)\n";
  (void)!write(2, head, strlen(head));
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void install(void) {
  const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) signal(sigs[i], on_signal);
}
