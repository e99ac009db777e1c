// Package mcs holds what the hub and the agent share about multi-cluster
// services (KEP-1645): the names of the hub objects and of the cluster
// set namespaces, and the labels both sides put on what they write.
package mcs
