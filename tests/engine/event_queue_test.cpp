#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "engine/event_queue.hpp"

using namespace moesim;
using namespace moesim::engine;

TEST_CASE("events run by time, then priority, then insertion order") {
  EventQueue q;
  std::vector<std::string> order;
  q.schedule(20, 0, [&] { order.push_back("t20"); });
  q.schedule(10, 5, [&] { order.push_back("t10 p5 first"); });
  q.schedule(10, -1, [&] { order.push_back("t10 p-1"); });
  q.schedule(10, 5, [&] { order.push_back("t10 p5 second"); });
  q.schedule(5, 100, [&] { order.push_back("t5 p100"); });
  q.run();
  CHECK(order == std::vector<std::string>{"t5 p100", "t10 p-1", "t10 p5 first", "t10 p5 second", "t20"});
  CHECK(q.now() == 20);
  CHECK(q.events_run() == 5);
  CHECK(q.empty());
}

TEST_CASE("an event scheduled now by a running event runs after the ones already queued for now") {
  EventQueue q;
  std::vector<int> order;
  q.schedule(7, 0, [&] {
    order.push_back(1);
    q.schedule(7, 0, [&] { order.push_back(3); });
    q.schedule(7, -1, [&] { order.push_back(2); });  // a lower priority value still goes first
  });
  q.schedule(7, 0, [&] { order.push_back(4); });
  q.run();
  // 4 was queued before 3 with the same priority; 2 outranks both.
  CHECK(order == std::vector<int>{1, 2, 4, 3});
}

TEST_CASE("schedule returns increasing sequence numbers") {
  EventQueue q;
  const auto a = q.schedule(3, 0, [] {});
  const auto b = q.schedule(1, 0, [] {});
  CHECK(b == a + 1);
}

TEST_CASE("scheduling in the past or an empty action is an InternalError") {
  EventQueue q;
  q.schedule(100, 0, [] {});
  q.run();
  CHECK(q.now() == 100);
  CHECK_THROWS_AS(q.schedule(99, 0, [] {}), InternalError);
  CHECK_NOTHROW(q.schedule(100, 0, [] {}));  // now itself is allowed
  CHECK_THROWS_AS(q.schedule(200, 0, EventQueue::Action{}), InternalError);
  CHECK_THROWS_AS(q.schedule(kNever, 0, [] {}), InternalError);
}

TEST_CASE("run(until) stops before later events and leaves the clock at until") {
  EventQueue q;
  int ran = 0;
  q.schedule(10, 0, [&] { ++ran; });
  q.schedule(30, 0, [&] { ++ran; });
  q.run(20);
  CHECK(ran == 1);
  CHECK(q.now() == 20);
  CHECK_FALSE(q.empty());
  CHECK_THROWS_AS(q.schedule(15, 0, [] {}), InternalError);
  q.run(30);  // an event exactly at until runs
  CHECK(ran == 2);
  CHECK(q.now() == 30);
}

TEST_CASE("run_next reports an empty queue") {
  EventQueue q;
  CHECK_FALSE(q.run_next());
  q.schedule(0, 0, [] {});
  CHECK(q.run_next());
  CHECK_FALSE(q.run_next());
}

TEST_CASE("run_polling hands control back every N events, and a poll that throws stops the run") {
  EventQueue q;
  int ran = 0;
  for (int i = 0; i < 10; ++i) q.schedule(i, 0, [&] { ++ran; });
  int polls = 0;
  q.run_polling(3, [&] { ++polls; });
  CHECK(ran == 10);
  CHECK(polls == 3);  // after events 3, 6 and 9

  for (int i = 0; i < 10; ++i) q.schedule(100 + i, 0, [&] { ++ran; });
  CHECK_THROWS_AS(q.run_polling(4, [&] { throw StoppedError("stop"); }), StoppedError);
  CHECK(ran == 14);  // stopped after the first batch
}
