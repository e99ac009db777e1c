// Package init is `flotilla init`: prepare a hub for clusters to join (its
// bootstrap RBAC and signed cluster-info, a join token) and print the join
// command; with --dry-run, print the objects that install the hub
// controllers on an existing cluster instead. Root imports it as
// initcmd, since init cannot name an import.
package init
