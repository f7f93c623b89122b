// Holder of the MPI test program's world (tests reach it through mpi_world()).
#include "tests/mpi/mpi_env.h"

#include <stdexcept>

namespace ptdp::test {

namespace {
Communicator* g_world = nullptr;  // test-program scope only; the library takes communicators as arguments
}

Communicator& mpi_world() {
  if (g_world == nullptr) throw std::logic_error("mpi_world() before main set it");
  return *g_world;
}

void set_mpi_world(Communicator* world) { g_world = world; }

}  // namespace ptdp::test
