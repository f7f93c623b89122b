// Reading a whole input file that must be a regular file: its size is known
// before a byte is read, so a device (/dev/zero, /dev/urandom), a FIFO or a
// folder given as data, weights or a checkpoint shard is refused at once
// instead of being read until memory runs out (or blocking on a writer).
// Small text inputs that may come from a pipe (a config from `<(...)`) use the
// JSON reader's bounded read instead (core/config/json_read.h).
#pragma once
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

namespace ptdp {

// Why `path` cannot be read as a regular file ("" when it can): it is missing,
// or (links followed) a folder, device, FIFO or socket. Checks without opening.
std::string regular_file_problem(const std::filesystem::path& path);

// The whole file, `path` opened once (without waiting on a FIFO) and checked
// by its descriptor. Throws std::runtime_error naming the path: it cannot be
// opened or read, is not a regular file, or holds more than `max_bytes`.
std::vector<std::uint8_t> read_regular_file(const std::filesystem::path& path,
                                            std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max());

}  // namespace ptdp
