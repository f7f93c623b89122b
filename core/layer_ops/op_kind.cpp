// Op kinds by name; see op_kind.h.
#include "core/layer_ops/op_kind.h"

namespace ptdp {

std::optional<OpKind> op_kind_from_name(std::string_view name) {
  for (const OpKindTraits& t : kOpKindTraits)
    if (name == t.name) return t.kind;
  return std::nullopt;
}

}  // namespace ptdp
