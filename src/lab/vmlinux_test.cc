// The bzImage unpacking, over images built here by the documented layouts:
// the x86 boot protocol's setup header (Documentation/arch/x86/boot.rst) and
// an ELF64 with the PVH entry note the kernel emits with CONFIG_PVH
// (arch/x86/platform/pvh/head.S: ELFNOTE(Xen, XEN_ELFNOTE_PHYS32_ENTRY, ...)).
// The lab boots the real Debian kernel this way in every lab test.
#include "lab/vmlinux.h"

#include <archive.h>
#include <archive_entry.h>
#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

namespace rdmacheck::lab {
namespace {

template <typename T>
void put(std::string& s, size_t off, T v) {
  if (s.size() < off + sizeof v) s.resize(off + sizeof v, '\0');
  std::memcpy(s.data() + off, &v, sizeof v);
}

// An ELF64 header, one PT_NOTE program header, and one note.
std::string elf_with_note(uint32_t type, std::string_view owner) {
  std::string elf;
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_phoff = sizeof eh;
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = 1;
  put(elf, 0, eh);
  const size_t notes_at = sizeof eh + sizeof(Elf64_Phdr);
  std::string note;
  put(note, 0, Elf64_Nhdr{static_cast<Elf64_Word>(owner.size()), 4, type});
  note.append(owner);
  note.resize((note.size() + 3) & ~size_t{3}, '\0');
  put(note, note.size(), uint32_t{0x1000000});  // the 32-bit entry address
  Elf64_Phdr ph{};
  ph.p_type = PT_NOTE;
  ph.p_offset = notes_at;
  ph.p_filesz = note.size();
  put(elf, sizeof eh, ph);
  elf += note;
  return elf;
}

std::string gzip(const std::string& data) {
  std::unique_ptr<archive, decltype(&archive_write_free)> a(archive_write_new(),
                                                            archive_write_free);
  archive_write_add_filter_gzip(a.get());
  archive_write_set_format_raw(a.get());
  std::string out(data.size() + 4096, '\0');
  size_t used = 0;
  EXPECT_EQ(archive_write_open_memory(a.get(), out.data(), out.size(), &used), ARCHIVE_OK);
  std::unique_ptr<archive_entry, decltype(&archive_entry_free)> e(archive_entry_new(),
                                                                  archive_entry_free);
  archive_entry_set_filetype(e.get(), AE_IFREG);
  EXPECT_EQ(archive_write_header(a.get(), e.get()), ARCHIVE_OK);
  EXPECT_EQ(archive_write_data(a.get(), data.data(), data.size()),
            static_cast<la_ssize_t>(data.size()));
  archive_write_close(a.get());
  out.resize(used);
  return out;
}

// setup_sects = 1: the protected-mode code starts at 1024; the payload sits
// 16 bytes into it.
std::string bzimage(const std::string& payload, uint16_t version = 0x20f) {
  std::string img(1024 + 16, '\0');
  put(img, 0x1f1, uint8_t{1});
  put(img, 0x202, uint32_t{0x53726448});
  put(img, 0x206, version);
  put(img, 0x248, uint32_t{16});
  put(img, 0x24c, static_cast<uint32_t>(payload.size()));
  img += payload;
  img += std::string(8, '\xff');  // the trailing CRC and padding of a real image
  return img;
}

TEST(Vmlinux, ThePayloadIsWhereTheSetupHeaderSays) {
  const auto img = bzimage("PAYLOAD");
  auto p = bzimage_payload(img);
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_EQ(*p, "PAYLOAD");
}

TEST(Vmlinux, ANonKernelOrAnOldProtocolIsRefused) {
  EXPECT_FALSE(bzimage_payload("not a kernel"));
  auto old = bzimage_payload(bzimage("x", 0x206));
  ASSERT_FALSE(old);
  EXPECT_NE(old.error().message().find("no payload fields"), std::string::npos);
  std::string bad = bzimage("x");
  put(bad, 0x24c, uint32_t{1u << 30});  // a length past the end
  EXPECT_FALSE(bzimage_payload(bad));
}

TEST(Vmlinux, AGzipPayloadWithThePvhNoteUnpacks) {
  const std::string elf = elf_with_note(18, std::string_view("Xen\0", 4));
  ASSERT_TRUE(has_pvh_note(elf));
  auto v = unpack_vmlinux(bzimage(gzip(elf)));
  ASSERT_TRUE(v) << v.error().message();
  EXPECT_EQ(*v, elf);
}

TEST(Vmlinux, AKernelWithoutThePvhNoteIsNotBootedUnpacked) {
  const std::string other = elf_with_note(18, std::string_view("GNU\0", 4));
  EXPECT_FALSE(has_pvh_note(other));
  auto v = unpack_vmlinux(bzimage(gzip(other)));
  ASSERT_FALSE(v);
  EXPECT_NE(v.error().message().find("PVH"), std::string::npos);
  // An uncompressed payload is not what a bzImage carries.
  EXPECT_FALSE(unpack_vmlinux(bzimage(elf_with_note(18, std::string_view("Xen\0", 4)))));
}

}  // namespace
}  // namespace rdmacheck::lab
