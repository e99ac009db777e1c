// Package mcs holds what the hub and the agent share about multi-cluster
// services (KEP-1645): the names of the hub objects and of the cluster
// set namespaces, the labels both sides put on what they write, and the
// compact form of endpoints in the hub objects (which endpoints a group
// lists by address alone, and how a group expands back into
// EndpointSlice endpoints for the agent's import side and the CLI).
package mcs
