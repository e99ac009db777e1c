// Package framework starts real control planes inside the test process: a
// hub (with Flotilla's CRDs and bootstrap objects) and spokes, each with its
// own etcd, kube-apiserver and controllers on free loopback ports, and
// removes them again. Tests talk to them through real TLS and RBAC.
package framework
