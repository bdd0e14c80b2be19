// `rdmacheck lab`: boots the planned guests, streams their consoles with a
// host prefix, watches the files they write in the lab export, and ends with
// the test's exit status, or 3 when the lab itself failed. Never waits
// forever: a guest that hangs is killed at the deadline and named.
#pragma once

#include <atomic>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "host/ticket.h"
#include "lab/plan.h"

namespace rdmacheck::lab {

constexpr int kLabFailed = 3;

// TICKET heads the --json document, as every command's (cli::ticket_header).
int run_lab(const LabOptions& o, const TicketHeader& ticket, const std::atomic<bool>& stop);

// The --json document (schemas/lab.schema.json): schema_version, the ticket
// and exit_status as every command's, then why the lab failed ("" when it
// did not), each guest (HOSTS, each run with its own exit_status and output)
// and the wire counters (WIRE).
nlohmann::json result_document(int status, const std::string& why, nlohmann::json hosts,
                               nlohmann::json wire, const TicketHeader& ticket);

}  // namespace rdmacheck::lab
