#include <catch2/catch.hpp>

#include <string>

#include "autotune/core/sha256.hpp"

using moetune::Sha256;
using moetune::sha256_hex;

TEST_CASE("SHA-256 matches the FIPS 180 example vectors", "[core][sha256]") {
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // One million 'a': exercises many blocks and the 64-bit length.
  CHECK(sha256_hex(std::string(1'000'000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256 gives the same digest however the input is split", "[core][sha256]") {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += static_cast<char>('a' + i * 7 % 26);
  std::string const whole = sha256_hex(text);
  for (std::size_t split : {0UL, 1UL, 55UL, 56UL, 63UL, 64UL, 65UL, 127UL, 999UL}) {
    Sha256 hash;
    hash.update(std::string_view(text).substr(0, split));
    hash.update(std::string_view(text).substr(split));
    CHECK(hash.finish_hex() == whole);
  }
}

TEST_CASE("SHA-256 fields are length-prefixed so concatenations stay distinct", "[core][sha256]") {
  Sha256 a;
  a.update_field("ab").update_field("c");
  Sha256 b;
  b.update_field("a").update_field("bc");
  CHECK(a.finish_hex() != b.finish_hex());
}
