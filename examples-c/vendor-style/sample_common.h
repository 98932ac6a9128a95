// Shared by the ADXL sample's server and client: the buffer size, the data pattern and the
// file through which the server publishes its buffer's address.
#ifndef ADXL_SAMPLE_COMMON_H_
#define ADXL_SAMPLE_COMMON_H_

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

constexpr size_t kSize = 1U << 20;

// What the server's memory holds at first, and what the client writes back.
inline uint8_t ServerByte(size_t i) { return static_cast<uint8_t>(i * 7 + 3); }
inline uint8_t ClientByte(size_t i) { return static_cast<uint8_t>(ServerByte(i) ^ 0x5A); }

// Writes `text` to `path` so that a reader sees either nothing or all of it.
inline bool Publish(const std::string &path, const std::string &text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << text << '\n';
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

// Waits up to `seconds` for `path` to appear and returns its first line ("" on timeout).
inline std::string WaitFor(const std::string &path, int seconds) {
  for (int i = 0; i < seconds * 100; i++) {
    std::ifstream in(path);
    std::string line;
    if (in && std::getline(in, line)) return line;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "";
}

#endif  // ADXL_SAMPLE_COMMON_H_
