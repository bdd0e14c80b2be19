#include "lab/vmlinux.h"

#include <archive.h>
#include <archive_entry.h>
#include <elf.h>
#include <fmt/core.h>

#include <cstring>
#include <memory>

namespace rdmacheck::lab {
namespace {

template <typename T>
bool read_at(std::string_view s, size_t off, T* out) {
  if (off > s.size() || s.size() - off < sizeof(T)) return false;
  std::memcpy(out, s.data() + off, sizeof(T));
  return true;
}

struct ReadCloser {
  void operator()(archive* a) const noexcept { archive_read_free(a); }
};

constexpr uint32_t kPvhEntryNote = 18;  // XEN_ELFNOTE_PHYS32_ENTRY

}  // namespace

Result<std::string_view> bzimage_payload(std::string_view image) {
  uint8_t setup_sects = 0;
  uint32_t magic = 0;
  uint16_t version = 0;
  uint32_t offset = 0;
  uint32_t length = 0;
  if (!read_at(image, 0x1f1, &setup_sects) || !read_at(image, 0x202, &magic) ||
      magic != 0x53726448 /* "HdrS" */) {
    return plain_error("bzImage", "no x86 boot-protocol header");
  }
  if (!read_at(image, 0x206, &version) || version < 0x208 || !read_at(image, 0x248, &offset) ||
      !read_at(image, 0x24c, &length)) {
    return plain_error("bzImage",
                       fmt::format("boot protocol {:#x} has no payload fields", version));
  }
  const size_t pm = (static_cast<size_t>(setup_sects == 0 ? 4 : setup_sects) + 1) * 512;
  if (pm > image.size() || offset > image.size() - pm || length > image.size() - pm - offset) {
    return plain_error("bzImage", "payload lies outside the image");
  }
  return image.substr(pm + offset, length);
}

bool has_pvh_note(std::string_view elf) {
  Elf64_Ehdr eh{};
  if (!read_at(elf, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr)) {
    return false;
  }
  for (size_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!read_at(elf, eh.e_phoff + i * sizeof ph, &ph)) return false;
    if (ph.p_type != PT_NOTE || ph.p_offset > elf.size() ||
        ph.p_filesz > elf.size() - ph.p_offset) {
      continue;
    }
    const std::string_view notes = elf.substr(ph.p_offset, ph.p_filesz);
    for (size_t at = 0; at + sizeof(Elf64_Nhdr) <= notes.size();) {
      Elf64_Nhdr nh{};
      read_at(notes, at, &nh);
      const size_t name_at = at + sizeof nh;
      const size_t desc_at = name_at + ((nh.n_namesz + 3) & ~3u);
      const size_t next = desc_at + ((nh.n_descsz + 3) & ~3u);
      if (next > notes.size()) break;
      if (nh.n_type == kPvhEntryNote && nh.n_namesz == 4 &&
          notes.substr(name_at, 4) == std::string_view("Xen\0", 4)) {
        return true;
      }
      at = next;
    }
  }
  return false;
}

// The decompressed bytes of one compressed stream, read by libarchive.
Result<std::string> decompress(std::string_view data) {
  std::unique_ptr<archive, ReadCloser> a(archive_read_new());
  archive_read_support_filter_all(a.get());
  archive_read_support_format_raw(a.get());
  if (archive_read_open_memory(a.get(), data.data(), data.size()) != ARCHIVE_OK) {
    return plain_error("archive_read_open_memory", archive_error_string(a.get()));
  }
  archive_entry* e = nullptr;
  if (archive_read_next_header(a.get(), &e) != ARCHIVE_OK) {
    return plain_error("archive_read_next_header", archive_error_string(a.get()));
  }
  if (archive_filter_count(a.get()) < 2) {
    return plain_error("bzImage", "the payload is not compressed in a format libarchive reads");
  }
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const la_ssize_t n = archive_read_data(a.get(), buf, sizeof buf);
    if (n < 0) return plain_error("archive_read_data", archive_error_string(a.get()));
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Result<std::string> unpack_vmlinux(std::string_view image) {
  auto payload = bzimage_payload(image);
  if (!payload) return payload.error();
  // The kernel's build appends the uncompressed size (le32) after the
  // compressed stream ("_with_size" in arch/x86/boot/compressed/Makefile),
  // and the payload length counts it; xz refuses trailing bytes.
  auto out = decompress(*payload);
  if (!out && payload->size() > 4) {
    if (auto trimmed = decompress(payload->substr(0, payload->size() - 4)))
      out = std::move(trimmed);
  }
  if (!out) return out.error();
  if (!has_pvh_note(*out)) {
    return plain_error("vmlinux", "the kernel has no PVH entry note (CONFIG_PVH)");
  }
  return out;
}

}  // namespace rdmacheck::lab
