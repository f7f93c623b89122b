// JUnit XML writing.
#include "core/gate/junit.h"

#include <cstdio>

namespace ptdp {

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 allows no control characters but tab, newline and carriage return.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') out += ' ';
        else out += c;
    }
  }
  return out;
}

std::string junit_xml(const std::string& suite, const std::vector<JunitCase>& cases) {
  int failures = 0, skipped = 0;
  double seconds = 0;
  for (const auto& c : cases) {
    failures += c.failure ? 1 : 0;
    skipped += !c.failure && c.skipped ? 1 : 0;
    seconds += c.seconds;
  }
  char head[256];
  std::snprintf(head, sizeof head, "\" tests=\"%zu\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n",
                cases.size(), failures, skipped, seconds);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"" +
                    xml_escape(suite) + head;
  for (const auto& c : cases) {
    char time[32];
    std::snprintf(time, sizeof time, "%.3f", c.seconds);
    out += "    <testcase name=\"" + xml_escape(c.name) + "\" classname=\"" + xml_escape(c.classname) +
           "\" time=\"" + time + "\">\n";
    if (c.failure) out += "      <failure message=\"" + xml_escape(*c.failure) + "\"/>\n";
    else if (c.skipped) out += "      <skipped message=\"" + xml_escape(*c.skipped) + "\"/>\n";
    if (!c.output.empty()) out += "      <system-out>" + xml_escape(c.output) + "</system-out>\n";
    out += "    </testcase>\n";
  }
  return out + "  </testsuite>\n</testsuites>\n";
}

}  // namespace ptdp
