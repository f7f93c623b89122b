// Launcher templates expand as launcher.h documents; bad templates are refused
// naming the placeholder; JUnit XML escapes and counts.
#include <gtest/gtest.h>

#include "core/gate/junit.h"
#include "core/launch/launcher.h"

namespace ptdp {
namespace {

Machine node_of(int gpus) {
  Machine m;
  m.gpus_per_node = gpus;
  return m;
}

TEST(Launcher, ShapeFillsWholeNodes) {
  const LaunchShape s = launch_shape(20, node_of(8));
  EXPECT_EQ(s.ranks, 20);
  EXPECT_EQ(s.nodes, 3);
  EXPECT_EQ(s.ranks_per_node, 8);
  EXPECT_EQ(s.gpus_per_node, 8);
  const LaunchShape one = launch_shape(2, node_of(8));
  EXPECT_EQ(one.nodes, 1);
  EXPECT_EQ(one.ranks_per_node, 2);
}

TEST(Launcher, TemplateExpandsEveryPlaceholder) {
  const Launcher l = Launcher::parse("wrap -N {nodes} -n {ranks} --per {ranks_per_node} -g {gpus_per_node} -- {cmd}");
  EXPECT_EQ(l.name(), "template");
  EXPECT_EQ(l.command_line(launch_shape(16, node_of(8)), {"/opt/ptdp", "train", "--config", "a b.json"}),
            "wrap -N 2 -n 16 --per 8 -g 8 -- /opt/ptdp train --config 'a b.json'");
}

TEST(Launcher, PresetsSpellOutTheirTemplates) {
  const Launcher srun = Launcher::parse("srun");
  EXPECT_EQ(srun.command_line(launch_shape(16, node_of(8)), {"ptdp", "train"}),
            "srun --nodes=2 --ntasks=16 --ntasks-per-node=8 ptdp train");
  const Launcher mpirun = Launcher::parse("mpirun", "/usr/bin/mpirun");
  EXPECT_EQ(mpirun.name(), "mpirun");
  EXPECT_EQ(mpirun.command_line(launch_shape(1, node_of(8)), {"ptdp", "train"}), "ptdp train")
      << "the default runs a single rank directly";
  const std::string line = mpirun.command_line(launch_shape(4, node_of(8)), {"ptdp", "train"});
  EXPECT_EQ(line.rfind("/usr/bin/mpirun", 0), 0u) << line;
  EXPECT_NE(line.find(" -np 4 ptdp train"), std::string::npos) << line;
}

TEST(Launcher, RefusesUnknownPlaceholdersAndTemplatesWithoutCmd) {
  try {
    Launcher::parse("srun -n {tasks} {cmd}");
    FAIL() << "an unknown placeholder was accepted";
  } catch (const LauncherRefused& e) {
    EXPECT_NE(std::string(e.what()).find("unknown placeholder {tasks}"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Launcher::parse("srun -n {ranks}"), LauncherRefused);
  EXPECT_THROW(Launcher::parse("srun -n {ranks {cmd}"), LauncherRefused);
  EXPECT_THROW(Launcher::parse("{cmd} {cmd}"), LauncherRefused);
}

TEST(Launcher, ShellQuotingSurvivesTheShell) {
  EXPECT_EQ(shell_quote("plain/path-1.json"), "plain/path-1.json");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_join({"a", "b c"}), "a 'b c'");
}

TEST(Junit, CountsAndEscapes) {
  const std::string xml = junit_xml("accept <cpu-host>", {{"gemm", "accept.kernels", 1.5, std::nullopt, std::nullopt, ""},
                                                         {"busbw", "accept.comm", 0, "0.5 < 1 & \"low\"", std::nullopt, ""},
                                                         {"nodes", "accept.scale", 0, std::nullopt, "one node", ""}});
  EXPECT_NE(xml.find("name=\"accept &lt;cpu-host&gt;\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\" "
                     "time=\"1.500\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure message=\"0.5 &lt; 1 &amp; &quot;low&quot;\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<skipped message=\"one node\"/>"), std::string::npos) << xml;
}

}  // namespace
}  // namespace ptdp
