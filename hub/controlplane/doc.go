// Package controlplane runs a Kubernetes control plane inside the calling
// process: etcd (embedded, or external servers), kube-apiserver and a chosen
// set of kube-controller-manager controllers.
//
// The hub is such a control plane plus Flotilla's hub controllers; the test
// harness starts several in one process (a hub and spokes). Every component
// is configured through its options structs and Run functions, never through
// its cobra command, which may be used only once per process.
//
// The data directory holds everything that must survive a restart: the PKI
// (created once, atomically), etcd's data and the admin kubeconfig. A lock
// file keeps two processes from sharing it.
package controlplane
