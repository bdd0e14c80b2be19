// The kernel image the guests boot, made fast to start under TCG.
//
// A bzImage decompresses itself inside the guest, and under TCG that
// decompression (an 8 MB xz payload on Debian 12) took 12-14 s of every
// guest's boot, more than the kernel's own boot. QEMU boots an uncompressed
// vmlinux directly through its PVH entry point, so the lab unpacks the
// payload once per run on the host (about a second) and boots that.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace rdmacheck::lab {

// The compressed payload of a bzImage, located by its boot-protocol setup
// header (Documentation/arch/x86/boot.rst: setup_sects at 0x1f1, "HdrS" at
// 0x202, version at 0x206, payload_offset/payload_length at 0x248/0x24c,
// relative to the protected-mode code at (setup_sects + 1) * 512).
Result<std::string_view> bzimage_payload(std::string_view image);

// True when ELF64 image carries the PVH entry note (type
// XEN_ELFNOTE_PHYS32_ENTRY, 18, owner "Xen") that QEMU needs to boot it.
bool has_pvh_note(std::string_view elf);

// The uncompressed vmlinux of bzImage `image`: the payload decompressed by
// libarchive (xz, gzip, zstd, lz4, bzip2, lzma), checked for the PVH note.
Result<std::string> unpack_vmlinux(std::string_view image);

}  // namespace rdmacheck::lab
