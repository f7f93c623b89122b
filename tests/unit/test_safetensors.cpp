// safetensors (core/checkpoint/safetensors.h): a round trip keeps names,
// dtypes, shapes, bytes and metadata; the reader converts 16-bit floats
// exactly; a truncated file, a bad header and overlapping tensors are refused
// with the file named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/checkpoint/safetensors.h"
#include "core/io/crc32.h"

namespace ptdp {
namespace {

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("ptdp_test_" + std::to_string(::getpid()) + "_" + name);
}

void expect_refused(const std::filesystem::path& path, const std::string& words) {
  try {
    SafetensorsFile f(path);
    ADD_FAILURE() << path << " was accepted";
  } catch (const SafetensorsError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(Safetensors, RoundTripKeepsTensorsAndMetadata) {
  const std::vector<float> a = {1.5f, -2.0f, 3.25f, 0.0f, 1e-3f, 7.0f};
  const std::vector<std::uint16_t> b = {0x3f80, 0xc000, 0x0001};  // bf16 1, -2, the smallest subnormal
  const std::vector<std::uint16_t> h = {0x3c00, 0xc000, 0x0001, 0x7bff};  // f16 1, -2, 2^-24, 65504
  const auto path = temp_file("roundtrip.safetensors");
  write_safetensors(path, {{"w", DType::f32, {2, 3}, a.data()}, {"b", DType::bf16, {3}, b.data()},
                           {"h", DType::f16, {4}, h.data()}},
                    {{"format", "pt"}, {"step", "3"}});
  const SafetensorsFile f(path);
  EXPECT_EQ(f.metadata().at("step"), "3");
  EXPECT_EQ(f.entry("w").shape, (Shape{2, 3}));
  EXPECT_EQ(f.entry("b").dtype, DType::bf16);
  EXPECT_EQ(f.read_f32("w"), a);
  EXPECT_EQ(std::memcmp(f.data("b"), b.data(), 6), 0);
  EXPECT_EQ(f.read_f32("b"), (std::vector<float>{1.0f, -2.0f, 0x1p-133f}));
  EXPECT_EQ(f.read_f32("h"), (std::vector<float>{1.0f, -2.0f, 0x1p-24f, 65504.0f}));
  EXPECT_THROW((void)f.entry("missing"), SafetensorsError);
  std::filesystem::remove(path);
}

// 16-bit encoding rounds to nearest even and keeps every value the type holds exactly.
TEST(Safetensors, SixteenBitEncodingRoundsToNearestEven) {
  const std::vector<float> exact = {1.0f, -2.0f, 0.5f, 65504.0f, 0x1p-24f, 0x1p-14f, 0.0f, 1.5f};
  const std::vector<float> halfway = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 70000.0f};  // f16: ties to even, past max
  const auto path = temp_file("encode.safetensors");
  const auto h1 = encode_f32(exact.data(), exact.size(), DType::f16), h2 = encode_f32(halfway.data(), halfway.size(), DType::f16);
  const auto b1 = encode_f32(exact.data(), exact.size(), DType::bf16);
  const std::vector<float> b_tie = {1.0f + 0x1p-8f};  // bf16: halfway between 1 and 1 + 2^-7, to 1
  const auto b2 = encode_f32(b_tie.data(), 1, DType::bf16);
  write_safetensors(path, {{"h1", DType::f16, {8}, h1.data()}, {"h2", DType::f16, {3}, h2.data()},
                           {"b1", DType::bf16, {8}, b1.data()}, {"b2", DType::bf16, {1}, b2.data()}});
  const SafetensorsFile f(path);
  EXPECT_EQ(f.read_f32("h1"), exact);
  EXPECT_EQ(f.read_f32("h2"), (std::vector<float>{1.0f, 1.0f + 4 * 0x1p-11f, INFINITY}));
  EXPECT_EQ(f.read_f32("b1")[3], 65536.0f);  // 65504 is not a bf16 value: the nearest is 2^16
  EXPECT_EQ(f.read_f32("b2"), (std::vector<float>{1.0f}));
  std::filesystem::remove(path);
}

// A streamed write reports the size and CRC-32 of exactly the bytes that reach the file.
TEST(Safetensors, AWriteReportsTheSizeAndCrcOfTheFile) {
  const std::vector<float> a = {1.0f, 2.0f, 3.0f};
  const auto path = temp_file("written.safetensors");
  const WrittenFile written = write_safetensors(path, {{"w", DType::f32, {3}, a.data()}}, {{"step", "1"}});
  std::ifstream in(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(written.bytes, static_cast<std::int64_t>(bytes.size()));
  EXPECT_EQ(written.crc32, crc32(bytes.data(), bytes.size()));
  std::filesystem::remove(path);
}

TEST(Safetensors, DamagedFilesAreRefusedWithTheirName) {
  const std::vector<float> a(16, 1.0f);
  const auto path = temp_file("damaged.safetensors");
  write_safetensors(path, {{"w", DType::f32, {16}, a.data()}});
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 4);  // a write cut short
  expect_refused(path, "outside");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const std::uint64_t n = 4;
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << "{x: ";
  }
  expect_refused(path, "not JSON");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                               R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
    const std::uint64_t n = header.size();
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << header << std::string(12, '\0');
  }
  expect_refused(path, "overlap");
  std::filesystem::remove(path);
  expect_refused(path, "cannot be opened");
}

}  // namespace
}  // namespace ptdp
