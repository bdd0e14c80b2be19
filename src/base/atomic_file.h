// Writes a whole file so that a reader never sees half of it: a temporary
// file in the same directory, fsync, rename (--json-file's documents, the
// monitor's --textfile for node_exporter).
#pragma once

#include <string>

#include "base/result.h"

namespace rdmacheck {

// CONTENT to PATH, through a temporary file beside it and a rename; the file
// is as readable as the umask lets any new file be.
Status write_file_atomically(const std::string& path, const std::string& content);
// The same for a secret (a key, a key ring): the file is 0600 from its
// creation on, whatever the umask.
Status write_secret_atomically(const std::string& path, const std::string& content);

}  // namespace rdmacheck
