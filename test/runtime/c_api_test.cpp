// The C API's error contract without a GPU: every NULL argument is a status and a message,
// never a crash, and creating a context on a machine without a GPU says why.
#include <catch2/catch.hpp>

#include <string>

#include "autotune/gpu/availability.hpp"
#include "moetune/moetune.h"

TEST_CASE("the C API reports NULL arguments as errors with messages") {
  CHECK(moetune_abi_version() == MOETUNE_ABI_VERSION);
  CHECK(moetune_context_create(0, nullptr, nullptr) == MOETUNE_ERROR_NULL_POINTER);
  CHECK_THAT(std::string(moetune_last_error()), Catch::Contains("moetune_context_create") &&
                                                    Catch::Contains("out is NULL"));
  CHECK(moetune_context_load_table(nullptr, "x.csv") == MOETUNE_ERROR_NULL_POINTER);
  CHECK(moetune_context_make_current(nullptr) == MOETUNE_ERROR_NULL_POINTER);
  CHECK(moetune_context_device(nullptr, nullptr, nullptr) == MOETUNE_ERROR_NULL_POINTER);
  moetune_layer* layer = reinterpret_cast<moetune_layer*>(1);
  CHECK(moetune_layer_prepare(nullptr, nullptr, nullptr, &layer) == MOETUNE_ERROR_NULL_POINTER);
  CHECK(layer == nullptr);  // cleared on failure
  CHECK(moetune_forward(nullptr, nullptr) == MOETUNE_ERROR_NULL_POINTER);
  CHECK_THAT(std::string(moetune_last_error()), Catch::Contains("layer is NULL"));
  std::size_t bytes = 0;
  CHECK(moetune_workspace_size(nullptr, 1, &bytes) == MOETUNE_ERROR_NULL_POINTER);
  CHECK(moetune_layer_selection(nullptr, 1, nullptr, nullptr, nullptr, nullptr) ==
        MOETUNE_ERROR_NULL_POINTER);
  moetune_forward_plan* plan = reinterpret_cast<moetune_forward_plan*>(1);
  CHECK(moetune_forward_plan_create(nullptr, nullptr, &plan) == MOETUNE_ERROR_NULL_POINTER);
  CHECK(plan == nullptr);  // cleared on failure
  CHECK_THAT(std::string(moetune_last_error()), Catch::Contains("moetune_forward_plan_create") &&
                                                    Catch::Contains("layer is NULL"));
  CHECK(moetune_forward_plan_create(nullptr, nullptr, nullptr) == MOETUNE_ERROR_NULL_POINTER);
  CHECK(moetune_forward_plan_launch(nullptr, nullptr) == MOETUNE_ERROR_NULL_POINTER);
  CHECK_THAT(std::string(moetune_last_error()), Catch::Contains("plan is NULL"));
  moetune_forward_plan_destroy(nullptr);
  CHECK(std::string(moetune_layer_report(nullptr)).empty());
  moetune_layer_destroy(nullptr);
  moetune_context_destroy(nullptr);
  CHECK(std::string(moetune_status_name(MOETUNE_ERROR_WORKSPACE)) == "MOETUNE_ERROR_WORKSPACE");
  CHECK(std::string(moetune_status_name(static_cast<moetune_status>(99))) == "MOETUNE_ERROR_UNKNOWN");
}

TEST_CASE("a context needs a usable GPU and says so") {
  moetune_context* context = nullptr;
  auto const status = moetune_context_create(0, nullptr, &context);
  if (moetune::gpu::probe_gpu().available) {
    CHECK(status == MOETUNE_OK);
    moetune_context* missing = nullptr;
    CHECK(moetune_context_create(1000, nullptr, &missing) == MOETUNE_ERROR_DEVICE);
    CHECK(missing == nullptr);
  } else {
    CHECK(status == MOETUNE_ERROR_DEVICE);
    CHECK(context == nullptr);
    CHECK_THAT(std::string(moetune_last_error()), Catch::Contains("no usable GPU"));
  }
  moetune_context_destroy(context);
}
