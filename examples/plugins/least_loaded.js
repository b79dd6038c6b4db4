#!/usr/bin/env node
// A plugin in JavaScript that speaks rebalance-lab's plugin protocol (docs/plugins.md): one JSON
// request per line on stdin, one JSON answer per line on stdout.  Members keep what they owned,
// up to an even share; every other partition goes to the subscribed member holding the fewest.
// Judged on sticky (balance first, then moves):
//
//   rebalance-lab compare --suite smoke --plugin "least-loaded-js=exec:node examples/plugins/least_loaded.js"
"use strict";
const readline = require("node:readline");

function assign(problem) {
  const members = problem.members;
  const topics = Object.keys(problem.topics).sort();
  const total = topics.reduce((sum, t) => sum + problem.topics[t], 0);
  const share = members.length ? Math.ceil(total / members.length) : 0;
  const assignment = {}, load = {}, taken = new Set();
  for (const m of members) { assignment[m.id] = {}; load[m.id] = 0; }
  const give = (m, topic, p) => {
    (assignment[m.id][topic] ??= []).push(p);
    load[m.id] += 1;
    taken.add(`${topic}/${p}`);
  };
  for (const m of members) {  // keep what is still subscribed, up to the share
    for (const [topic, owned] of Object.entries(m.owned ?? {})) {
      if (!m.topics.includes(topic)) continue;
      for (const p of owned) {
        if (p < (problem.topics[topic] ?? 0) && !taken.has(`${topic}/${p}`) && load[m.id] < share) give(m, topic, p);
      }
    }
  }
  for (const topic of topics) {  // the rest to the least loaded subscriber
    const subscribers = members.filter((m) => m.topics.includes(topic));
    for (let p = 0; p < problem.topics[topic] && subscribers.length; p++) {
      if (taken.has(`${topic}/${p}`)) continue;
      give(subscribers.reduce((a, b) => (load[b.id] < load[a.id] ? b : a)), topic, p);
    }
  }
  for (const lists of Object.values(assignment)) for (const l of Object.values(lists)) l.sort((a, b) => a - b);
  return { assignment, status: "heuristic" };
}

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const request = JSON.parse(line);
  const answer = request.describe ? { name: "least-loaded-js", judged_on: "sticky" } : assign(request.problem);
  process.stdout.write(JSON.stringify(answer) + "\n");
});
