// What the C++ outside benchmarks (benches/cxx/*/main.cpp) share: dying with the child process
// they started, and the runtime's last message.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "acl/acl.h"

namespace outside {

// The program's name in its messages.
inline const char *program = "benchmark";
// The child process while it runs: killed and reaped on every way out through die().
inline volatile pid_t child = 0;

[[noreturn]] inline void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// Prints "program[pid]: message" and exits 1, killing the child first.
inline void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "%s[%d]: ", program, static_cast<int>(getpid()));
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
  if (child > 0) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    child = 0;
  }
  std::exit(1);
}

// The runtime's last error message, or "no message".
inline const char *recent_error() {
  const char *m = aclGetRecentErrMsg();
  return m != nullptr && *m != '\0' ? m : "no message";
}

}  // namespace outside
