// This process's place (core/topology/process_place.h): the ranks come from
// whichever launcher's variables are set, the host from gethostname, and every
// "where" message names them alike.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "core/topology/process_place.h"

namespace ptdp {
namespace {

// Sets launcher variables for one test and puts every one of them back after.
class LauncherVars {
 public:
  explicit LauncherVars(const std::map<std::string, std::string>& set) {
    for (const char* var : kAll) {
      const char* v = std::getenv(var);
      saved_[var] = v ? std::optional<std::string>(v) : std::nullopt;
      unsetenv(var);
    }
    for (const auto& [var, value] : set) setenv(var.c_str(), value.c_str(), 1);
  }
  ~LauncherVars() {
    for (const auto& [var, value] : saved_)
      if (value) setenv(var.c_str(), value->c_str(), 1);
      else unsetenv(var.c_str());
  }

 private:
  static constexpr const char* kAll[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "PMI_RANK",
                                         "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID",
                                         "PMI_LOCAL_RANK"};
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(ProcessPlace, AProcessStartedAloneIsRankZero) {
  const LauncherVars none({});
  const ProcessPlace p = this_process();
  EXPECT_EQ(p.rank, 0);
  EXPECT_EQ(p.local_rank, 0);
  char name[256] = "";
  ASSERT_EQ(gethostname(name, sizeof name - 1), 0);
  EXPECT_EQ(p.host, name);
}

TEST(ProcessPlace, RanksComeFromEachLaunchersVariables) {
  {
    const LauncherVars open_mpi({{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
    EXPECT_EQ(this_process().rank, 5);
    EXPECT_EQ(this_process().local_rank, 1);
  }
  {
    const LauncherVars slurm({{"SLURM_PROCID", "12"}, {"SLURM_LOCALID", "4"}});
    EXPECT_EQ(this_process().rank, 12);
    EXPECT_EQ(this_process().local_rank, 4);
  }
  {
    const LauncherVars mpich({{"PMI_RANK", "3"}, {"MPI_LOCALRANKID", "2"}});
    EXPECT_EQ(this_process().rank, 3);
    EXPECT_EQ(this_process().local_rank, 2);
  }
}

TEST(ProcessPlace, WhereNamesTheRankAndTheHost) {
  EXPECT_EQ(where(ProcessPlace{3, 1, "node-7"}), "rank 3 (node-7)");
}

}  // namespace
}  // namespace ptdp
