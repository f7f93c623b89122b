// The world communicator of the MPI test program, set once by its main.
#pragma once
#include "core/comm/communicator.h"

namespace ptdp::test {

Communicator& mpi_world();
void set_mpi_world(Communicator* world);

}  // namespace ptdp::test
