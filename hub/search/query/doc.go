// Package query answers the hub's search queries from the index
// (hub/search/store), for the hub's API server: hub/search mounts New's
// handler under the search endpoint, behind the API server's
// authentication, so kubectl's and the CLI's credentials work as they do
// everywhere on the hub.
//
// It serves two shapes:
//
//   - search.SearchPath?q=…: the query language (Parse: space-separated
//     key=value terms and one free word for names), answered with a
//     SearchResult, for `flotilla search` and the console;
//   - search.ResourcesPrefix…: the index in the Kubernetes API's shape,
//     after Clusterpedia's /resources: discovery of the indexed resources,
//     lists and gets with label and field selectors, limit and continue,
//     Tables for kubectl get with a Cluster column, and clusters pinned by
//     ?clusters= or by the path clusters/<c>/ (a kubeconfig's server URL).
//
// Authorization is per cluster: a user sees a cluster's objects only if
// the API server's authorizer allows them create on managedclusters/proxy
// or, narrower, get on managedclusters/search, named after the cluster
// (or not named: every cluster). The answer is remembered per user for
// AccessTTL. A user who may see no cluster gets an empty result.
//
// It reads nothing but the store and writes nothing.
package query
