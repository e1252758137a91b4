# Decoding a 1,000-container state checkpoint, as at start-up: the fast path for canonical
# files against the document reader it falls back to.
topologyd_benchmark(NAME state_bench SRCS ${CMAKE_CURRENT_LIST_DIR}/state_bench.cc
                    DEPS topologyd::state)
