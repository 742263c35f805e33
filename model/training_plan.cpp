#include "training_plan.hpp"

namespace memwall::model {

const char* sharding_name(Sharding s) {
  switch (s) {
  case Sharding::None:
    return "none";
  case Sharding::Zero1:
    return "zero1";
  case Sharding::Zero2:
    return "zero2";
  case Sharding::Zero3:
    return "zero3";
  }
  return "?";
}

bool parse_sharding(const std::string& text, Sharding* out) {
  for (Sharding s : {Sharding::None, Sharding::Zero1, Sharding::Zero2, Sharding::Zero3})
    if (text == sharding_name(s)) {
      *out = s;
      return true;
    }
  return false;
}

} // namespace memwall::model
