// Answering one request the spool transport claimed.
#pragma once

#include <sandbox_host/host/broker/serving.hpp>
#include <sandbox_host/host/broker/spool.hpp>

#include <string>

namespace sandbox_host::broker {

// Answers request into its reply FIFO, or refuses it there with the reason, claim_error
// first (what Spool::claim found wrong). A request without a FIFO is only audited.
void answer_spool_request(Spool &spool, ClaimedRequest request, const std::string &claim_error,
                          Serving &serving);

// Refuses request at once, before anyone is identified (the broker is busy): the reason
// goes into its reply FIFO as far as the FIFO takes it without blocking, and to the audit.
void refuse_spool_request(Spool &spool, ClaimedRequest request, const std::string &rule,
                          const std::string &reason, Serving &serving);

}  // namespace sandbox_host::broker
