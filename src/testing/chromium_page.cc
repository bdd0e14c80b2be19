#include "testing/chromium_page.h"

#include <png.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "base/subprocess.h"

namespace rdmacheck::test_util {
namespace fs = std::filesystem;

Result<Page> open_in_chromium(const fs::path& html_file) {
  const fs::path dir = html_file.parent_path();
  Page page{.screenshot = dir / "page.png"};
  const fs::path console = dir / "console.txt";
  // One run gives the DOM on stdout, the screenshot, and the log on stderr.
  const std::string cmd =
      "chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
      "--disable-component-update --disable-sync --no-first-run --hide-scrollbars "
      "--force-device-scale-factor=1 --user-data-dir=" +
      (dir / "profile").string() +
      " --enable-logging=stderr --v=0 --window-size=" + std::to_string(kPageWidth) + "," +
      std::to_string(kPageHeight) + " --screenshot=" + page.screenshot.string() +
      " --dump-dom file://" + html_file.string() + " 2>" + console.string();
  auto run = run_capture({"sh", "-c", cmd}, std::chrono::seconds(90));
  if (!run) return run.error();
  page.dom = std::move(run->out);
  std::ifstream log(console);
  std::ostringstream text;
  text << log.rdbuf();
  page.console = text.str();
  if (run->exit_status != 0) {
    return plain_error("chromium", "exit status " + std::to_string(run->exit_status) + ": " +
                                       page.console.substr(0, 2000));
  }
  return page;
}

Result<Image> read_png(const fs::path& png) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, png.c_str())) {
    return plain_error("png_image_begin_read_from_file", png.string() + ": " + image.message);
  }
  image.format = PNG_FORMAT_RGB;
  Image out{static_cast<int>(image.width), static_cast<int>(image.height),
            std::vector<unsigned char>(PNG_IMAGE_SIZE(image))};
  if (!png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr)) {
    return plain_error("png_image_finish_read", png.string() + ": " + image.message);
  }
  return out;
}

std::map<std::string, size_t> count_colours(const Image& image, Rect r,
                                            const std::vector<std::string>& colours) {
  std::map<uint32_t, std::string> wanted;
  std::map<std::string, size_t> counts;
  for (const auto& c : colours) {
    wanted[static_cast<uint32_t>(std::stoul(c.substr(1), nullptr, 16))] = c;
    counts[c] = 0;
  }
  for (int y = std::max(r.y, 0); y < std::min(r.y + r.h, image.height); ++y) {
    for (int x = std::max(r.x, 0); x < std::min(r.x + r.w, image.width); ++x) {
      const unsigned char* p = &image.rgb[(static_cast<size_t>(y) * image.width + x) * 3];
      const auto it = wanted.find(uint32_t{p[0]} << 16 | uint32_t{p[1]} << 8 | p[2]);
      if (it != wanted.end()) ++counts[it->second];
    }
  }
  return counts;
}

}  // namespace rdmacheck::test_util
