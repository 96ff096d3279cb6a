// A bounded pre-scan of XML text, before any parser builds a tree from it (URDF import, docs/urdf.md,
// "Limits"). One pass through Expat (a streaming parser: it keeps the open elements on a stack of its own, so
// its stack use does not grow with the nesting), in time and memory linear in the text; it stops at the first
// limit passed and refuses what TinyXML, urdfdom's recursive parser, would read differently from a
// conforming XML parser (document type declarations, processing instructions, character references).
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string_view>

namespace denoc {

class StopCondition;

/// Limits of a scanned document (defaults: docs/urdf.md, "Limits"; the largest real URDF we know uses a
/// small fraction of each).
struct XmlLimits {
  std::size_t max_bytes = std::size_t(1) << 20;  // the whole text
  int max_depth = 64;                            // nesting of elements; the root element is at depth 1
  std::size_t max_elements = 100000;             // elements in all
  std::size_t max_attributes = 64;               // attributes of one element
  std::size_t max_name_bytes = 256;              // the name of an element or of an attribute
  std::size_t max_value_bytes = 4096;            // the value of an attribute
};

/// One attribute of a start tag: its name and its value (entities replaced, as a conforming parser does).
struct XmlAttribute {
  std::string_view name;
  std::string_view value;
};

/// A start tag as the scan reports it. The views are valid during the call only.
struct XmlElement {
  int depth = 0;  // 1 for the root element
  std::size_t line = 0;
  std::string_view name;
  std::span<const XmlAttribute> attributes;

  /// The attribute called `name`, or null.
  const XmlAttribute* find(std::string_view attribute) const {
    for (const XmlAttribute& a : attributes) {
      if (a.name == attribute) return &a;
    }
    return nullptr;
  }
};

/// What a scan saw.
struct XmlScanStats {
  std::size_t bytes = 0;
  std::size_t lines = 0;
  std::size_t elements = 0;
  std::size_t attributes = 0;
  int max_depth = 0;
  std::size_t parser_peak_bytes = 0;  // the most heap memory the parser held at once
};

/// Scans `text` once. Refuses, with a ModelError whose message starts with `what` ("URDF text") and names the
/// limit or the construct and the line: text that is not UTF-8 or holds a NUL byte; text, nesting, elements,
/// attributes of one element, names or attribute values beyond `limits`; XML that is not well formed; a
/// document type declaration (DTDs and entities: no external or expanded entity is ever read); processing
/// instructions (the XML declaration <?xml ...?> is allowed); character references (&#...;), which TinyXML
/// decodes differently depending on the declared encoding (the five predefined entities &amp; &lt; &gt;
/// &quot; &apos; are allowed); element names that do not start with an ASCII letter, '_' or a non-ASCII
/// character (TinyXML does not read those as elements). `on_element`, if given, is called for every start
/// tag in document order, after its limits were checked; an exception it throws ends the scan and is
/// rethrown. `stop`, if given, is polled every 1024 elements: when set, the scan throws denoc::Stopped (its
/// count of work done is in bytes of text).
XmlScanStats scanXml(std::string_view text, const XmlLimits& limits = {},
                     const std::function<void(const XmlElement&)>& on_element = {},
                     const StopCondition* stop = nullptr, std::string_view what = "XML text");

}  // namespace denoc
