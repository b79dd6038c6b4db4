// KafkaJS's round robin partition assigner (kafkajs 2.2.4, PartitionAssigners.roundRobin) as a
// rebalance-lab plugin program: one request per line on stdin, one answer per line on stdout
// (docs/plugins.md).  Usage: node assigner.js
//
// The assigner runs as a KafkaJS group leader runs it (ConsumerGroup's sync): every member's
// JoinGroup metadata is what its own assigner's protocol() encodes (MemberMetadata version 0 and
// its subscribed topics), the cluster's metadata holds every partition of the document's topics,
// and the topics assigned are the leader's own subscription (KafkaJS passes topicsSubscribed, the
// leader's, not the union of the members').  The leader is the first member of the document (the
// group coordinator makes the first member to join the leader).  Each member's answer is decoded
// with KafkaJS's MemberAssignment.decode.  The time of assign() is measured inside Node.
'use strict'

const readline = require('readline')
const {
  AssignerProtocol: { MemberMetadata, MemberAssignment },
  PartitionAssigners: { roundRobin },
} = require('kafkajs')

const NAME = 'kafkajs-roundrobin'

function cluster(topics) {
  return {
    findTopicPartitionMetadata(topic) {
      const count = Object.prototype.hasOwnProperty.call(topics, topic) ? topics[topic] : 0
      return Array.from({ length: count }, (_, partitionId) => ({ partitionId, leader: 0 }))
    },
  }
}

async function answer(problem) {
  const members = problem.members || []
  const assignment = {}
  for (const member of members) assignment[member.id] = {}
  if (members.length === 0) return { assignment, status: 'heuristic' }
  const assigner = roundRobin({ cluster: cluster(problem.topics || {}) })
  const joined = members.map(member => ({
    memberId: member.id,
    memberMetadata: assigner.protocol({ topics: member.topics || [] }).metadata,
  }))
  const leaderTopics = members[0].topics || []
  const started = process.hrtime.bigint()
  const given = await assigner.assign({ members: joined, topics: leaderTopics })
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  for (const { memberId, memberAssignment } of given) {
    const decoded = MemberAssignment.decode(memberAssignment)
    const topics = (assignment[memberId] = assignment[memberId] || {})
    for (const [topic, partitions] of Object.entries(decoded ? decoded.assignment : {})) {
      if (partitions.length > 0) topics[topic] = [...partitions].sort((a, b) => a - b)
    }
  }
  return { assignment, status: 'heuristic', info: { assign_seconds: seconds } }
}

async function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  for await (const line of lines) {
    if (!line.trim()) continue
    let reply
    try {
      const request = JSON.parse(line)
      if (request.describe) {
        reply = { name: NAME, judged_on: ['sticky'], kafkajs: require('kafkajs/package.json').version }
      } else {
        reply = await answer(request.problem || {})
      }
    } catch (error) {
      reply = { status: 'error', error: `${error.name}: ${error.message}` }
    }
    process.stdout.write(JSON.stringify(reply) + '\n')
  }
}

main()
