// Initialisation scales of the GPT-2 recipe.
#include "core/model/model_context.h"

#include <cmath>

namespace ptdp {

float ModelContext::residual_init_std() const {
  return 0.02f / std::sqrt(2.0f * static_cast<float>(model.layers));
}

}  // namespace ptdp
