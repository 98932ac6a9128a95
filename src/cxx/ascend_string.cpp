// ascend_string.cpp - part of ascendless.
// Implements the vendor interface ge::AscendString (declared in graph/ascend_string.h).
//
// Rules, matching the vendor class:
//   - a string is "null" when name_ is empty (default construction or a NULL pointer);
//   - a null string reads as "" with length 0 and hashes like the empty string;
//   - in comparisons a null string sorts before every non-null string (even ""), and two null
//     strings are equal;
//   - operator==(const char *d): a NULL `d` equals only a null string; a non-NULL `d` equals
//     only a non-null string with the same content, so a null string is NOT equal to "".
//     This keeps == against a pointer consistent with == against AscendString(d).
//   - Find returns std::string::npos when either side is null.
// No member lets an exception escape: callers may be C++ code built with other compilers or
// flags, and an exception leaving a library boundary would terminate their process.

#include "graph/ascend_string.h"

#include <functional>
#include <memory>
#include <string>

namespace ge {

// The vendor header names AscendStringImpl as a friend; it is used here to reach name_ from
// helpers shared by the operators.
class AscendStringImpl {
 public:
  // <0, 0 or >0 as `a` sorts before, equal to or after `b`; null sorts first.
  static int Compare(const AscendString &a, const AscendString &b) {
    const std::string *const lhs = a.name_.get();
    const std::string *const rhs = b.name_.get();
    if (lhs == nullptr || rhs == nullptr) {
      return (lhs == nullptr ? 0 : 1) - (rhs == nullptr ? 0 : 1);
    }
    return lhs->compare(*rhs);
  }

  static bool EqualsCString(const AscendString &a, const char_t *const d) {
    const std::string *const lhs = a.name_.get();
    if (lhs == nullptr || d == nullptr) {
      return lhs == nullptr && d == nullptr;
    }
    return lhs->compare(d) == 0;
  }
};

// Allocation failure (or a length beyond std::string's limit) is caught and leaves the string
// null: the constructors cannot report errors, and throwing out of the library is not allowed.
AscendString::AscendString(const char_t *const name) {
  if (name == nullptr) {
    return;
  }
  try {
    name_ = std::make_shared<std::string>(name);
  } catch (...) {
    name_.reset();
  }
}

AscendString::AscendString(const char_t *const name, size_t length) {
  if (name == nullptr) {
    return;
  }
  try {
    name_ = std::make_shared<std::string>(name, length);
  } catch (...) {
    name_.reset();
  }
}

const char_t *AscendString::GetString() const {
  if (name_ == nullptr) {
    return "";
  }
  return name_->c_str();
}

size_t AscendString::GetLength() const {
  if (name_ == nullptr) {
    return 0U;
  }
  return name_->length();
}

size_t AscendString::Find(const AscendString &ascend_string) const {
  if (name_ == nullptr || ascend_string.name_ == nullptr) {
    return std::string::npos;
  }
  return name_->find(*ascend_string.name_);
}

size_t AscendString::Hash() const {
  if (name_ == nullptr) {
    static const size_t empty_hash = std::hash<std::string>()(std::string());
    return empty_hash;
  }
  return std::hash<std::string>()(*name_);
}

bool AscendString::operator<(const AscendString &d) const {
  return AscendStringImpl::Compare(*this, d) < 0;
}

bool AscendString::operator>(const AscendString &d) const {
  return AscendStringImpl::Compare(*this, d) > 0;
}

bool AscendString::operator<=(const AscendString &d) const {
  return AscendStringImpl::Compare(*this, d) <= 0;
}

bool AscendString::operator>=(const AscendString &d) const {
  return AscendStringImpl::Compare(*this, d) >= 0;
}

bool AscendString::operator==(const AscendString &d) const {
  return AscendStringImpl::Compare(*this, d) == 0;
}

bool AscendString::operator!=(const AscendString &d) const {
  return AscendStringImpl::Compare(*this, d) != 0;
}

bool AscendString::operator==(const char_t *const d) const {
  return AscendStringImpl::EqualsCString(*this, d);
}

bool AscendString::operator!=(const char_t *const d) const {
  return !AscendStringImpl::EqualsCString(*this, d);
}

}  // namespace ge
