// Package devcluster runs a small Kubernetes cluster inside the calling
// process, for development and tests: no container engine, no kubelet.
//
// A dev cluster is the embedded control plane of package
// hub/controlplane (etcd and kube-apiserver) with the
// kube-controller-manager controllers that make workloads progress
// (Controllers), kube-scheduler, and simulated nodes and Pods from kwok
// (sigs.k8s.io/kwok). The nodes are Node objects with the capacity and
// topology labels the options ask for; kwok plays their kubelet: it makes
// them Ready, keeps their leases, and moves the Pods bound to them to
// Running (or Succeeded), so that Deployments become Available and Jobs
// complete. Nothing runs: a Pod is only its status.
//
// Every component is configured through its options and started without
// its cobra command, so several dev clusters can run in one process.
// The data directory holds the PKI, etcd's data and admin.kubeconfig; a
// restart reuses them, and reconciles the nodes with the options.
package devcluster
