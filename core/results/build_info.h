// Build provenance: the git commit the library was built from, and library versions.
#pragma once

namespace ptdp {

// "<sha>" or "<sha>-dirty", written at build time by cmake/WriteVersion.cmake.
const char* build_commit();

}  // namespace ptdp
