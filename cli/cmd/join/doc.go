// Package join is `flotilla join`: on the managed cluster, check the join
// token and the hub's CA (from --ca-file, or from the hub's cluster-info,
// trusted only with a valid JWS signature made with the token, as
// kubeadm's discovery does), then install the agent with a bootstrap
// kubeconfig, print it (--dry-run), or run it in the foreground (--run).
package join
