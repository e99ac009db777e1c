// Package kubeconfig is `flotilla kubeconfig`: print a kubeconfig whose
// contexts reach managed clusters through the hub's cluster proxy, with
// the credentials of the hub kubeconfig.
package kubeconfig
