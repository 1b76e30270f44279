// The kiln bench line protocol (kiln/rt/bench_worker.h) and the Chrome trace writer
// (kiln/rt/trace.h), without a model.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "kiln/rt/bench_worker.h"
#include "kiln/rt/trace.h"

namespace {

// Runs serve_bench on `requests`; returns what it printed and its exit code.
std::pair<std::string, int> serve(const std::string& requests, const kiln::rt::BenchHooks& hooks) {
  std::FILE* in = std::tmpfile();
  std::FILE* out = std::tmpfile();
  std::fputs(requests.c_str(), in);
  std::rewind(in);
  const int rc = kiln::rt::serve_bench(1.5, hooks, in, out);
  std::rewind(out);
  std::string text;
  for (int c; (c = std::fgetc(out)) != EOF;) text += static_cast<char>(c);
  std::fclose(in);
  std::fclose(out);
  return {text, rc};
}

}  // namespace

TEST_CASE("bench worker answers run, outputs and quit") {
  int runs = 0;
  std::string written;
  kiln::rt::BenchHooks hooks{[&] { return 0.25 * ++runs; }, [&](const std::string& dir) { written = dir; }};
  auto [text, rc] = serve("run 2\noutputs /tmp/x\nrun 1\nquit\nrun 5\n", hooks);
  CHECK(rc == 0);
  CHECK(text == "ready 1.500000\ntimes 0.250000 0.500000\nok\ntimes 0.750000\n");
  CHECK(written == "/tmp/x");
  CHECK(runs == 3);  // nothing after quit
}

TEST_CASE("bench worker reports bad requests and failed runs as one error line") {
  kiln::rt::BenchHooks ok{[] { return 1.0; }, [](const std::string&) {}};
  CHECK(serve("run zero\n", ok) == std::pair<std::string, int>{"ready 1.500000\nerror bad request 'run zero'\n", 1});
  CHECK(serve("jump\n", ok).first == "ready 1.500000\nerror unknown request 'jump'\n");
  kiln::rt::BenchHooks failing{[]() -> double { throw std::runtime_error("run failed: boom"); },
                               [](const std::string&) {}};
  CHECK(serve("run 1\n", failing) == std::pair<std::string, int>{"ready 1.500000\nerror run failed: boom\n", 1});
  CHECK(serve("", ok) == std::pair<std::string, int>{"ready 1.500000\n", 0});  // end of input ends it
}

TEST_CASE("json_string escapes quotes, backslashes and control characters") {
  CHECK(kiln::rt::json_string("a\"b\\c\n\x01") == "\"a\\\"b\\\\c\\u000a\\u0001\"");
  CHECK(kiln::rt::json_string("/conv/Conv") == "\"/conv/Conv\"");
}

TEST_CASE("write_chrome_trace writes complete events with op and run") {
  const std::string path = "test_bench_worker_trace.json";
  std::string error;
  REQUIRE(kiln::rt::write_chrome_trace(path, "net", 2, {{"run", "run", 0, 10, 0}, {"conv \"1\"", "Conv", 0.5, 9, 0}}, error));
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  const std::string text = s.str();
  CHECK(text.rfind("{\"traceEvents\": [", 0) == 0);
  CHECK(text.find("{\"name\": \"conv \\\"1\\\"\", \"cat\": \"Conv\", \"ph\": \"X\", \"ts\": 0.500, \"dur\": 9.000, "
                  "\"pid\": 1, \"tid\": 1, \"args\": {\"op\": \"Conv\", \"run\": 0}}") != std::string::npos);
  CHECK(text.find("\"otherData\": {\"model\": \"net\", \"threads\": 2, \"generator\": \"kiln\"}") != std::string::npos);
  std::remove(path.c_str());
  CHECK_FALSE(kiln::rt::write_chrome_trace("/nonexistent-dir/t.json", "net", 1, {}, error));
  CHECK(error.find("/nonexistent-dir/t.json: cannot write the profile") == 0);
}
