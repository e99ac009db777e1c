// Package framework starts real control planes inside the test process: a
// hub (with Flotilla's CRDs and bootstrap objects) and spokes, each with its
// own etcd, kube-apiserver and controllers on free loopback ports, and
// removes them again. Tests talk to them through real TLS and RBAC.
//
// It also starts the binaries as processes (StartProcess, StartHubProcess),
// and drives the docker command line for the container specs (NewDocker):
// images, networks on subnets of their own, containers at fixed addresses,
// files in and out, and removal of everything a run created.
package framework
