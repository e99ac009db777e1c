// Package members changes the membership of the etcd cluster that the
// embedded etcds of several flotilla-hub processes form
// (--etcd-initial-cluster): it lists the members, adds one (as a learner,
// with the instructions to start it on its machine) and removes one, with
// the checks that keep the cluster's quorum.
//
// It reaches the cluster through the etcd member of a hub that runs on this
// machine, found by that hub's --data-dir (DIR/etcd.url: each member's
// client URL is on its own machine's loopback), and uses the etcd v3
// Cluster API. It reaches the other members only on their peer URLs, with
// the local member's peer certificate, to tell which ones answer.
package members
