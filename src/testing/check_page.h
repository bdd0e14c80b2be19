// Tests only: what the page of `check --html` must show for a check document,
// held against the page Chromium rendered (the DOM the page's script built
// and the screenshot's pixels). The unit test feeds it a captured document,
// the lab test the page a guest wrote.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/chromium_page.h"

namespace rdmacheck::test_util {

// Empty when the page shows everything the document holds: no console
// message; the verdict; the ticket header; one table row per result, ping,
// ladder rung and doctor check; the link's rate; and charts whose series each
// have their own colour, present in the screenshot inside the chart, whose
// message-size axes read in bytes.
std::vector<std::string> check_page_problems(const nlohmann::json& doc, const Page& page);

// "64 B", "1 KiB", "64 KiB", "8 MiB": how the page names a message size.
std::string size_label(uint64_t bytes);

}  // namespace rdmacheck::test_util
