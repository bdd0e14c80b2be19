// Tests only: a page as a reader sees it. Headless Chromium opens the file
// offline, runs its scripts, and gives back the DOM they built, its console
// and a screenshot; count_colours reads the screenshot's pixels (libpng).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/result.h"

namespace rdmacheck::test_util {

// The screenshot covers this many CSS pixels of the page, one pixel each.
constexpr int kPageWidth = 1200;
constexpr int kPageHeight = 6000;

struct Page {
  std::string dom;                   // --dump-dom: the document after its scripts ran
  std::string console;               // Chromium's log; the page's messages are its CONSOLE lines
  std::filesystem::path screenshot;  // PNG, kPageWidth x kPageHeight
};

// Opens html_file (its folder also holds Chromium's profile and the screenshot).
Result<Page> open_in_chromium(const std::filesystem::path& html_file);

struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
};
struct Image {
  int width = 0, height = 0;
  std::vector<unsigned char> rgb;  // row by row, three bytes a pixel
};
Result<Image> read_png(const std::filesystem::path& png);
// How many pixels inside r have exactly each colour ("#rrggbb").
std::map<std::string, size_t> count_colours(const Image& image, Rect r,
                                            const std::vector<std::string>& colours);

}  // namespace rdmacheck::test_util
