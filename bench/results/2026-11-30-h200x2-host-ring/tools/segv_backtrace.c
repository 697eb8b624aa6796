// LD_PRELOAD diagnostic: on SIGSEGV/SIGBUS/SIGABRT print the host backtrace (and this process's mappings of the
// addresses) to stderr, then die of the same signal. For a crash that happens only under compute-sanitizer.
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <ucontext.h>

static void onSignal(int sig, siginfo_t* info, void* context) {
  char line[256];
  int n = snprintf(line, sizeof line, "\n== segv_backtrace: signal %d at address %p, thread %d\n", sig,
                   info->si_addr, (int)gettid());
  write(2, line, (size_t)n);
  ucontext_t* uc = (ucontext_t*)context;
  n = snprintf(line, sizeof line, "== pc %p\n", (void*)uc->uc_mcontext.gregs[REG_RIP]);
  write(2, line, (size_t)n);
  void* frames[64];
  int count = backtrace(frames, 64);
  backtrace_symbols_fd(frames, count, 2);
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps) {
    char buf[512];
    write(2, "== maps (executables)\n", 22);
    while (fgets(buf, sizeof buf, maps)) {
      if (strstr(buf, " r-xp ")) write(2, buf, strlen(buf));
    }
    fclose(maps);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void install(void) {
  static char stack[1 << 16];
  stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack, .ss_flags = 0};
  sigaltstack(&ss, NULL);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = onSignal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigaction(SIGSEGV, &action, NULL);
  sigaction(SIGBUS, &action, NULL);
}
