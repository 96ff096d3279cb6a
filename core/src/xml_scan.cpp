// The bounded pre-scan of XML text (xml_scan.hpp) on Expat. Expat calls back from C: nothing may be thrown
// through it, so a handler records what went wrong, stops the parser, and scanXml throws once Expat returns.
#include "denoc/xml_scan.hpp"

#include <expat.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "denoc/model.hpp"
#include "denoc/stop.hpp"

namespace denoc {

namespace {

// ---- Expat's heap use, counted per scan (Expat's memory functions take no user data: the scan running on
// this thread is found through a thread-local pointer, set for the scan's duration only)

struct HeapCount {
  std::size_t live = 0;
  std::size_t peak = 0;
};

thread_local HeapCount* tl_heap = nullptr;

constexpr std::size_t kHeader = 16;  // keeps Expat's blocks 16-byte aligned

void* countedMalloc(std::size_t size) {
  auto* p = static_cast<unsigned char*>(std::malloc(size + kHeader));
  if (p == nullptr) return nullptr;
  std::memcpy(p, &size, sizeof size);
  if (HeapCount* h = tl_heap) {
    h->live += size;
    if (h->live > h->peak) h->peak = h->live;
  }
  return p + kHeader;
}

void countedFree(void* ptr) {
  if (ptr == nullptr) return;
  unsigned char* p = static_cast<unsigned char*>(ptr) - kHeader;
  std::size_t size;
  std::memcpy(&size, p, sizeof size);
  if (HeapCount* h = tl_heap) h->live -= size;
  std::free(p);
}

void* countedRealloc(void* ptr, std::size_t size) {
  if (ptr == nullptr) return countedMalloc(size);
  unsigned char* p = static_cast<unsigned char*>(ptr) - kHeader;
  std::size_t old;
  std::memcpy(&old, p, sizeof old);
  auto* q = static_cast<unsigned char*>(std::realloc(p, size + kHeader));
  if (q == nullptr) return nullptr;
  std::memcpy(q, &size, sizeof size);
  if (HeapCount* h = tl_heap) {
    h->live = h->live - old + size;
    if (h->live > h->peak) h->peak = h->live;
  }
  return q + kHeader;
}

const XML_Memory_Handling_Suite kMemory = {countedMalloc, countedRealloc, countedFree};

// ---- the text itself

// TinyXML (urdfdom's XML parser) steps over a UTF-8 sequence by the length its first byte announces without
// looking for the end of the text, so a truncated or malformed sequence makes it read past the end of the
// buffer; it also stops at a NUL byte and silently ignores the rest. Refuse both, naming the byte offset.
void checkUtf8(std::string_view text, std::string_view what) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned c = s[i];
    if (c == 0) throw ModelError(std::string(what) + " has a NUL byte at offset " + std::to_string(i));
    if (c < 0x80) {
      ++i;
      continue;
    }
    // the sequence's length, the smallest code point it may encode, and its first bits
    std::size_t len = 0;
    unsigned min = 0, cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2, min = 0x80, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3, min = 0x800, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4, min = 0x10000, cp = c & 0x07;
    }
    bool ok = len != 0 && i + len <= n;
    for (std::size_t k = 1; ok && k < len; ++k) {
      ok = (s[i + k] & 0xC0) == 0x80;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if (!ok || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      throw ModelError(std::string(what) + " is not valid UTF-8 at byte offset " + std::to_string(i));
    i += len;
  }
}

std::string quoted(std::string_view s) {
  constexpr std::size_t kShown = 40;
  std::string q(1, '\'');  // appended: GCC 12 warns falsely on "literal" + std::string&&
  q += s.substr(0, kShown);
  q += s.size() > kShown ? "...'" : "'";
  return q;
}

// ---- the scan

class Scan {
 public:
  Scan(std::string_view text, const XmlLimits& limits,
       const std::function<void(const XmlElement&)>& on_element, const StopCondition* stop,
       std::string_view what)
      : text_(text), limits_(limits), on_element_(on_element), stop_(stop), what_(what) {}

  XmlScanStats run() {
    stats_.bytes = text_.size();
    if (text_.size() > limits_.max_bytes || text_.size() > std::size_t(std::numeric_limits<int>::max())) {
      refuseNow("has " + std::to_string(text_.size()) + " bytes, more than the limit of " +
                std::to_string(std::min<std::size_t>(limits_.max_bytes, std::numeric_limits<int>::max())));
    }
    checkUtf8(text_, what_);
    HeapCount heap;
    struct Guard {
      HeapCount* saved = tl_heap;
      explicit Guard(HeapCount* h) { tl_heap = h; }
      ~Guard() { tl_heap = saved; }
    } guard(&heap);
    parser_ = XML_ParserCreate_MM("UTF-8", &kMemory, nullptr);
    if (parser_ == nullptr) throw std::bad_alloc();
    struct Free {
      XML_Parser p;
      ~Free() { XML_ParserFree(p); }
    } free_parser{parser_};
    XML_SetUserData(parser_, this);
    XML_SetElementHandler(parser_, &Scan::onStart, &Scan::onEnd);
    XML_SetStartDoctypeDeclHandler(parser_, &Scan::onDoctype);
    XML_SetProcessingInstructionHandler(parser_, &Scan::onInstruction);
    // no entity is declared without a DTD; no external entity is read (no handler); parameter entities off
    XML_SetParamEntityParsing(parser_, XML_PARAM_ENTITY_PARSING_NEVER);

    const XML_Status status = XML_Parse(parser_, text_.data(), static_cast<int>(text_.size()), XML_TRUE);
    stats_.parser_peak_bytes = heap.peak;
    if (error_) std::rethrow_exception(error_);
    if (status != XML_STATUS_OK) {
      const XML_Error code = XML_GetErrorCode(parser_);
      if (code == XML_ERROR_NO_MEMORY) throw std::bad_alloc();
      refuseNow(std::string("is not well-formed XML (") + XML_ErrorString(code) + ")",
                XML_GetCurrentLineNumber(parser_));
    }
    stats_.lines = XML_GetCurrentLineNumber(parser_);
    return stats_;
  }

 private:
  [[noreturn]] void refuseNow(const std::string& why, std::size_t line = 0) const {
    throw ModelError(std::string(what_) + " " + why + (line ? " (line " + std::to_string(line) + ")" : ""));
  }

  // records the first error and stops the parser (handlers must not throw through Expat)
  void refuse(const std::string& why) {
    if (error_) return;
    try {
      refuseNow(why, XML_GetCurrentLineNumber(parser_));
    } catch (...) {
      error_ = std::current_exception();
    }
    XML_StopParser(parser_, XML_FALSE);
  }

  void fail(std::exception_ptr e) {
    if (!error_) error_ = e;
    XML_StopParser(parser_, XML_FALSE);
  }

  static void XMLCALL onStart(void* self, const XML_Char* name, const XML_Char** atts) {
    static_cast<Scan*>(self)->start(name, atts);
  }
  static void XMLCALL onEnd(void* self, const XML_Char*) { --static_cast<Scan*>(self)->depth_; }
  static void XMLCALL onDoctype(void* self, const XML_Char*, const XML_Char*, const XML_Char*, int) {
    static_cast<Scan*>(self)->refuse(
        "has a document type declaration (<!DOCTYPE ...>): DTDs and entities are refused");
  }
  static void XMLCALL onInstruction(void* self, const XML_Char* target, const XML_Char*) {
    static_cast<Scan*>(self)->refuse("has a processing instruction <?" + std::string(target).substr(0, 40) +
                                     " ...?>: only the XML declaration <?xml ...?> is allowed");
  }

  void start(const char* name, const char** atts) {
    if (error_) return;
    try {
      ++depth_;
      ++stats_.elements;
      const std::string_view element(name);
      if (depth_ > limits_.max_depth) {
        return refuse("is nested deeper than the limit of " + std::to_string(limits_.max_depth) +
                      " levels: element " + quoted(element) + " at depth " + std::to_string(depth_));
      }
      if (depth_ > stats_.max_depth) stats_.max_depth = depth_;
      if (stats_.elements > limits_.max_elements) {
        return refuse("has more than the limit of " + std::to_string(limits_.max_elements) +
                      " elements: element " + quoted(element) + " is the next");
      }
      if (element.size() > limits_.max_name_bytes) {
        return refuse("has an element name of " + std::to_string(element.size()) +
                      " bytes, more than the limit of " + std::to_string(limits_.max_name_bytes) + ": " +
                      quoted(element));
      }
      // TinyXML reads "<" followed by anything else as an unknown node up to the next '>'
      const auto first = static_cast<unsigned char>(element[0]);
      if (!((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') || first == '_' ||
            first >= 0x80)) {
        return refuse("has an element name " + quoted(element) +
                      " that does not start with a letter or '_' (TinyXML does not read it as an element)");
      }
      attributes_.clear();
      std::size_t count = 0;
      while (atts[2 * count] != nullptr) ++count;
      if (count > limits_.max_attributes) {
        return refuse("has more attributes on one element than the limit of " +
                      std::to_string(limits_.max_attributes) + ": " + std::to_string(count) + " on element " +
                      quoted(element));
      }
      for (std::size_t k = 0; k < count; ++k) {
        const std::string_view a(atts[2 * k]), v(atts[2 * k + 1]);
        if (a.size() > limits_.max_name_bytes) {
          return refuse("has an attribute name of " + std::to_string(a.size()) +
                        " bytes, more than the limit of " + std::to_string(limits_.max_name_bytes) + ": " +
                        quoted(a) + " of element " + quoted(element));
        }
        if (v.size() > limits_.max_value_bytes) {
          return refuse("has an attribute value of " + std::to_string(v.size()) +
                        " bytes, more than the limit of " + std::to_string(limits_.max_value_bytes) + ": " +
                        quoted(a) + " of element " + quoted(element));
        }
        attributes_.push_back({a, v});
      }
      stats_.attributes += count;
      if (count > 0) checkCharacterReferences(element);
      if (error_) return;
      if (stop_ && (stats_.elements & 1023) == 0 && stop_->stopRequested()) {
        try {
          const XML_Index at = XML_GetCurrentByteIndex(parser_);
          stop_->raise(std::string(what_) + " (pre-scan)", at > 0 ? static_cast<std::uint64_t>(at) : 0,
                       text_.size(), "bytes");
        } catch (...) {
          return fail(std::current_exception());
        }
      }
      if (on_element_) {
        XmlElement e;
        e.depth = depth_;
        e.line = XML_GetCurrentLineNumber(parser_);
        e.name = element;
        e.attributes = attributes_;
        on_element_(e);
      }
    } catch (...) {
      fail(std::current_exception());
    }
  }

  // the start tag's own bytes: a character reference in an attribute value is decoded to UTF-8 here but to
  // one byte by TinyXML when the document declares no UTF-8 encoding, so two different names could be equal
  // to urdfdom and not to us (or the reverse)
  void checkCharacterReferences(std::string_view element) {
    const XML_Index at = XML_GetCurrentByteIndex(parser_);
    const int count = XML_GetCurrentByteCount(parser_);
    if (at < 0 || count <= 0) return;
    const std::string_view tag = text_.substr(static_cast<std::size_t>(at), static_cast<std::size_t>(count));
    if (tag.find("&#") != std::string_view::npos) {
      refuse("has a character reference (&#...;) in an attribute of element " + quoted(element) +
             ": write the character itself (UTF-8)");
    }
  }

  std::string_view text_;
  const XmlLimits& limits_;
  const std::function<void(const XmlElement&)>& on_element_;
  const StopCondition* stop_;
  std::string_view what_;
  XML_Parser parser_ = nullptr;
  int depth_ = 0;
  XmlScanStats stats_;
  std::vector<XmlAttribute> attributes_;
  std::exception_ptr error_;
};

}  // namespace

XmlScanStats scanXml(std::string_view text, const XmlLimits& limits,
                     const std::function<void(const XmlElement&)>& on_element, const StopCondition* stop,
                     std::string_view what) {
  return Scan(text, limits, on_element, stop, what).run();
}

}  // namespace denoc
