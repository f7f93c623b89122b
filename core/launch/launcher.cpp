// Launcher templates: checked once when parsed, expanded per command.
#include "core/launch/launcher.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <string_view>
#include <thread>

#include "core/config/json_read.h"

namespace ptdp {

namespace {

constexpr std::array<const char*, 5> kPlaceholders = {"ranks", "nodes", "ranks_per_node", "gpus_per_node", "cmd"};
constexpr const char* kMpirunTemplate = "mpirun -np {ranks} {cmd}";
constexpr const char* kSrunTemplate = "srun --nodes={nodes} --ntasks={ranks} --ntasks-per-node={ranks_per_node} {cmd}";

std::string known_list() {
  std::string out;
  for (const char* p : kPlaceholders) out += std::string(out.empty() ? "" : ", ") + "{" + p + "}";
  return out;
}

// The template as messages show it: quoted, control characters escaped, cut short.
std::string shown(const std::string& text) { return json_excerpt(nlohmann::json(text)); }

// "" when the shell reads position `at` of `text` unquoted, else where it stands.
std::string quoting_at(const std::string& text, std::size_t at) {
  char quote = 0;  // the quote open here: '\'', '"' or none
  for (std::size_t i = 0; i < at; ++i) {
    const char c = text[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0;
    } else if (c == '\\') {
      if (i + 1 == at) return "after a backslash";
      ++i;
    } else if (quote == '"') {
      if (c == '"') quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    }
  }
  return quote == '\'' ? "inside single quotes" : quote == '"' ? "inside double quotes" : "";
}

// The placeholders of a template, in order; throws for one that is not known,
// not closed, or quoted (where the quoting of what is substituted would not hold).
std::vector<std::string> placeholders(const std::string& text) {
  std::vector<std::string> found;
  for (std::size_t open = text.find('{'); open != std::string::npos; open = text.find('{', open + 1)) {
    const std::size_t close = text.find('}', open);
    const std::string where = "launcher template " + shown(text) + ": ";
    if (close == std::string::npos)
      throw LauncherRefused(where + "'{' at " + std::to_string(open) + " is not closed");
    const std::string name = text.substr(open + 1, close - open - 1);
    if (std::find(kPlaceholders.begin(), kPlaceholders.end(), name) == kPlaceholders.end())
      throw LauncherRefused(where + "unknown placeholder {" + cut_text(name, 40) + "}; known: " + known_list());
    if (const std::string quoting = quoting_at(text, open); !quoting.empty())
      throw LauncherRefused(where + "{" + name + "} at " + std::to_string(open) + " is " + quoting +
                            "; write placeholders unquoted: ptdp quotes what it puts there, and quotes around it "
                            "would let the shell read the command as code");
    found.push_back(name);
  }
  return found;
}

std::string value_of(const std::string& name, const LaunchShape& s, const std::string& cmd) {
  if (name == "ranks") return std::to_string(s.ranks);
  if (name == "nodes") return std::to_string(s.nodes);
  if (name == "ranks_per_node") return std::to_string(s.ranks_per_node);
  if (name == "gpus_per_node") return std::to_string(s.gpus_per_node);
  return cmd;
}

}  // namespace

LaunchShape launch_shape(int ranks, const Machine& machine) {
  LaunchShape s;
  s.ranks = std::max(1, ranks);
  s.gpus_per_node = std::max(1, machine.gpus_per_node);
  s.nodes = (s.ranks + s.gpus_per_node - 1) / s.gpus_per_node;
  s.ranks_per_node = std::min(s.ranks, s.gpus_per_node);
  return s;
}

Launcher Launcher::parse(const std::string& text, const std::string& mpiexec) {
  Launcher l;
  l.mpiexec_ = mpiexec;
  if (text == "mpirun" || text.empty()) {
    l.name_ = "mpirun";
    l.template_ = kMpirunTemplate;
  } else if (text == "srun") {
    l.name_ = "srun";
    l.template_ = kSrunTemplate;
  } else {
    l.name_ = "template";
    l.template_ = text;
  }
  if (text.size() > kMaxTemplateBytes)
    throw LauncherRefused("launcher template " + shown(text) + ": " + std::to_string(text.size()) +
                          " bytes, more than the " + std::to_string(kMaxTemplateBytes) + " a launcher line may hold");
  if (const std::string why = control_character_problem(text); !why.empty())
    throw LauncherRefused("launcher template " + shown(text) + ": " + why + "; a template is one line");
  const std::vector<std::string> used = placeholders(l.template_);
  if (std::count(used.begin(), used.end(), "cmd") != 1)
    throw LauncherRefused("launcher template " + shown(text) +
                          ": must hold {cmd} exactly once (where the ptdp command goes)");
  return l;
}

std::string Launcher::command_line(const LaunchShape& shape, const std::vector<std::string>& cmd) const {
  const std::string command = shell_join(cmd);
  if (name_ == "mpirun") {
    if (shape.ranks == 1) return command;
    std::string line = shell_quote(mpiexec_);
    if (geteuid() == 0) line += " --allow-run-as-root";
    if (shape.ranks > static_cast<int>(std::thread::hardware_concurrency())) line += " --oversubscribe";
    return line + " -np " + std::to_string(shape.ranks) + " " + command;
  }
  std::string out;
  std::size_t at = 0;
  for (std::size_t open = template_.find('{'); open != std::string::npos; open = template_.find('{', at)) {
    const std::size_t close = template_.find('}', open);
    out += template_.substr(at, open - at) + value_of(template_.substr(open + 1, close - open - 1), shape, command);
    at = close + 1;
  }
  return out + template_.substr(at);
}

std::string control_character_problem(const std::string& text) {
  const auto bad = std::find_if(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
  if (bad == text.end()) return "";
  char code[8];
  std::snprintf(code, sizeof code, "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(*bad)));
  return std::string("holds a control character (") + code + ") at byte " + std::to_string(bad - text.begin());
}

std::string shell_quote(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
  });
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + shell_quote(w);
  return out;
}

}  // namespace ptdp
