// What the field tables (core/config/field.h) generate: docs/config-fields.md
// and the section of fuzz/ptdp.dict that lists every config and profile key
// and spelling. tests/tools/config_fields.cpp writes both;
// tests/unit/test_config_fields.cpp fails when either differs from the tables.
#pragma once
#include <string>

namespace ptdp {

// The whole of docs/config-fields.md: one table per struct (key, type,
// default, bounds, meaning), nested structs in sections of their own.
std::string config_fields_markdown();

// `dict` (the text of fuzz/ptdp.dict) with its generated section rewritten
// from the tables, or appended when it has none.
std::string dict_with_config_fields(const std::string& dict);

// The lines of that section, its two marker comments included.
std::string config_fields_dict_section();

}  // namespace ptdp
