// How a multi-rank ptdp command is started on a cluster: a launcher template
// with placeholders, or a named preset. The sweep runner, the Slurm scripts it
// emits and `ptdp accept` all start their ranks through one Launcher, so a
// site's `srun` or wrapper serves every multi-rank command alike.
//
//   {ranks}           ranks of the job (t·p·d)
//   {nodes}           nodes it spans: ceil(ranks / gpus_per_node)
//   {ranks_per_node}  min(ranks, gpus_per_node)
//   {gpus_per_node}   the profile's devices per node (a CPU profile: its rank slots)
//   {cmd}             the ptdp command, each word shell-quoted
//
// Presets: "mpirun" (the default) is `mpirun -np {ranks} {cmd}`, adding
// --allow-run-as-root when run as root and --oversubscribe past the cores, and
// runs a single-rank command directly; "srun" is
// `srun --nodes={nodes} --ntasks={ranks} --ntasks-per-node={ranks_per_node} {cmd}`.
// Anything else is a template; it must hold {cmd}, and `{name}` other than the
// five above is refused. The template is the user's own shell text, but what
// ptdp substitutes into it is data: numbers, and the command with each word
// shell-quoted. So a template is one line (no control characters, at most
// kMaxTemplateBytes) and every placeholder stands outside quotes and after no
// backslash, where the quoting holds (inside "..." a quoted `$(...)` would run).
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/config/machine.h"

namespace ptdp {

// The longest template taken: a site's launcher line, not a script.
inline constexpr std::size_t kMaxTemplateBytes = 4096;

// The numbers a template's placeholders take.
struct LaunchShape {
  int ranks = 1, nodes = 1, ranks_per_node = 1, gpus_per_node = 1;
};

// The shape of `ranks` ranks on `machine`: as many full nodes as they need.
LaunchShape launch_shape(int ranks, const Machine& machine);

// A template or preset that cannot be used; what() names the problem
// ("launcher template \"...\": unknown placeholder {gpus}; known: ...").
struct LauncherRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Launcher {
 public:
  // `text`: "mpirun", "srun" or a template. `mpiexec`: the mpirun the "mpirun"
  // preset starts (the one ptdp was built against). Throws LauncherRefused.
  static Launcher parse(const std::string& text, const std::string& mpiexec = "mpirun");

  const std::string& name() const { return name_; }           // "mpirun", "srun" or "template"
  const std::string& text() const { return template_; }       // the template, presets spelled out
  std::string spec() const { return name_ == "template" ? template_ : name_; }  // what parse() takes back
  // The shell command line (for /bin/sh -c, or a batch script) that starts `cmd` as the shape's ranks.
  std::string command_line(const LaunchShape& shape, const std::vector<std::string>& cmd) const;

 private:
  std::string name_, template_, mpiexec_;
};

// Why `text` cannot stand on one line of a script or command line, or "": it
// holds a control character (a newline would end the line, and what follows it
// would run as a command of its own). Names the first one and where it is.
std::string control_character_problem(const std::string& text);

// `word` quoted for a POSIX shell (unchanged when it needs no quotes).
std::string shell_quote(const std::string& word);
// Words joined with spaces, each shell-quoted.
std::string shell_join(const std::vector<std::string>& words);

}  // namespace ptdp
