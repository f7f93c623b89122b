// CRC-32 (IEEE 802.3, the polynomial zlib and PNG use; reflected 0xEDB88320)
// of a file's bytes: a checkpoint's manifest records each shard's and the
// loader compares; a Slurm folder records its sweep file's.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ptdp {

// CRC-32 of `n` bytes, continuing from `crc` (0 to start): crc32("123456789") = 0xCBF43926.
std::uint32_t crc32(const void* data, std::size_t n, std::uint32_t crc = 0);

}  // namespace ptdp
