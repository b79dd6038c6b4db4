// One KafkaJS consumer of rebalance-lab's live client matrix (peers/client_matrix.py's line
// protocol): key=value options, commands on stdin ("subscribe a,b", "stop"), every assignment as
// a JSON line on stdout stamped with CLOCK_MONOTONIC (process.hrtime) in milliseconds.
//
// KafkaJS's protocol is eager and tells a member what it holds through its instrumentation
// events: REBALANCING (everything it held is given up: "revoked") and GROUP_JOIN (its new
// assignment: "assigned").  It takes no subscription change: KafkaJS's subscribe only adds topics
// to a consumer.  Options: bootstrap, group, member, topics, assignor (roundrobin, KafkaJS's one
// built-in assigner), session_ms, heartbeat_ms.
'use strict';
const readline = require('readline');
const { Kafka, PartitionAssigners, logLevel } = require('kafkajs');

const opts = Object.fromEntries(process.argv.slice(2).map((a) => {
  const i = a.indexOf('=');
  return [a.slice(0, i), a.slice(i + 1)];
}));
const now = () => Number(process.hrtime.bigint()) / 1e6;
let held = [];
let generation = -1;

function emit(event, partitions, extra) {
  const doc = { t: now(), event, partitions: partitions || [], ...(extra || {}) };
  process.stdout.write(JSON.stringify(doc) + '\n');
}

const kafka = new Kafka({
  clientId: opts.member,
  brokers: [opts.bootstrap],
  logLevel: logLevel.NOTHING,
});
const consumer = kafka.consumer({
  groupId: opts.group,
  partitionAssigners: [PartitionAssigners.roundRobin],
  sessionTimeout: Number(opts.session_ms),
  heartbeatInterval: Number(opts.heartbeat_ms),
  rebalanceTimeout: 10000,
  metadataMaxAge: 1000,
});
const { GROUP_JOIN, REBALANCING, CRASH } = consumer.events;
consumer.on(REBALANCING, () => {
  if (held.length) emit('revoked', held);
  held = [];
});
consumer.on(GROUP_JOIN, (e) => {
  const assignment = e.payload.memberAssignment || {};
  if (held.length) emit('revoked', held);
  held = [];
  for (const topic of Object.keys(assignment).sort()) {
    for (const p of assignment[topic]) held.push([topic, p]);
  }
  generation += 1;
  emit('assigned', held, { joins: generation });
});
consumer.on(CRASH, (e) => emit('error', [], { text: String(e.payload.error) }));

async function start(topics) {
  await consumer.subscribe({ topics, fromBeginning: false });
  await consumer.run({ autoCommit: false, eachMessage: async () => {} });
}

async function main() {
  await consumer.connect();
  await start(opts.topics.split(','));
  emit('ready');
  const lines = readline.createInterface({ input: process.stdin });
  let queue = Promise.resolve();
  const stop = async () => {
    await consumer.disconnect();
    if (held.length) emit('revoked', held);
    held = [];
    emit('closed');
    process.exit(0);
  };
  lines.on('line', (line) => {
    const command = line.trim();
    queue = queue.then(async () => {
      if (command === 'stop') await stop();
      else emit('error', [], { text: `unknown command: ${command}` });
    });
  });
  lines.on('close', () => { queue = queue.then(stop); });
}

main().catch((error) => {
  process.stderr.write(`kafkajs driver: ${error}\n`);
  process.exit(2);
});
