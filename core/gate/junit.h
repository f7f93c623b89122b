// JUnit XML, the report CI systems (GitLab, Jenkins, GitHub test reporters)
// read: one <testsuite> of <testcase>s, each passed, failed (with a message) or
// skipped (with a reason). `ptdp accept` and `ptdp compare` write it.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace ptdp {

struct JunitCase {
  std::string name;                    // "gemm_tflops", "figure13 #4 (2,32)"
  std::string classname;               // the group: "accept.kernels", "compare"
  double seconds = 0;                  // how long it took (0: not timed)
  std::optional<std::string> failure;  // set: failed, with this message
  std::optional<std::string> skipped;  // set: not run, with this reason
  std::string output;                  // <system-out>: the figures behind the verdict
};

// The document: <testsuites><testsuite name= tests= failures= skipped= time=>...
std::string junit_xml(const std::string& suite, const std::vector<JunitCase>& cases);

// Text escaped for XML attributes and content (& < > " ' and control characters).
std::string xml_escape(const std::string& text);

}  // namespace ptdp
