// One reading of a CUDA query (cudaStreamQuery, cudaEventQuery): ready, not
// ready yet, or an error. A query that answers cudaErrorNotReady leaves that
// code in the runtime's last-error slot, where the next launch check
// (cudaGetLastError) would report it as "device not ready"; every such answer
// pops the slot here. Templates over the query and the pop, so a CPU test can
// drive them with fakes (this header needs only the runtime's error enum).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ptdp {

enum class QueryState : std::uint8_t { ready, not_ready, failed };

struct QueryResult {
  QueryState state = QueryState::ready;
  cudaError_t error = cudaSuccess;  // the error when failed
};

// `query()` → cudaError_t; `pop_last_error()` → cudaError_t (cudaGetLastError:
// returns and clears the slot). Called exactly once per NotReady answer. When
// the slot held something else than NotReady (an earlier launch failed
// without being checked), that error is reported rather than dropped.
template <class Query, class PopLastError>
QueryResult read_query(Query&& query, PopLastError&& pop_last_error) {
  const cudaError_t e = query();
  if (e == cudaSuccess) return {QueryState::ready, e};
  if (e != cudaErrorNotReady) return {QueryState::failed, e};
  const cudaError_t last = pop_last_error();
  if (last != cudaSuccess && last != cudaErrorNotReady) return {QueryState::failed, last};
  return {QueryState::not_ready, e};
}

// As read_query; true when ready, false when not yet; on an error throws
// std::runtime_error "<place>: <describe(error)>".
template <class Query, class PopLastError, class Describe>
bool query_ready(Query&& query, PopLastError&& pop_last_error, Describe&& describe, const std::string& place) {
  const QueryResult r = read_query(query, pop_last_error);
  if (r.state == QueryState::failed) throw std::runtime_error(place + ": " + describe(r.error));
  return r.state == QueryState::ready;
}

namespace cuda {

// The runtime's name and text of `e`, "cudaErrorLaunchFailure: unspecified launch failure".
inline std::string describe(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

inline QueryResult read_stream(cudaStream_t s) {
  return read_query([s] { return cudaStreamQuery(s); }, [] { return cudaGetLastError(); });
}
inline QueryResult read_event(cudaEvent_t e) {
  return read_query([e] { return cudaEventQuery(e); }, [] { return cudaGetLastError(); });
}

}  // namespace cuda

}  // namespace ptdp
