// Package search holds what the agent's collector and the hub's search
// index share beyond the API types: the endpoint's paths.
package search

import "strings"

const (
	// Prefix is the path under which the hub's API server serves search.
	Prefix = "/apis/search.flotilla.io/v1alpha1/"
	// IngestPrefix is where agents write: IngestPrefix + <cluster> + "/changes"
	// (POST a ChangeBatch) and "/versions" (GET ObjectVersions).
	IngestPrefix = Prefix + "ingest/"
	// SearchPath answers queries with a SearchResult.
	SearchPath = Prefix + "search"
	// ResourcesPrefix serves the index in the shape of the Kubernetes API,
	// for kubectl: ResourcesPrefix + "api/v1/pods", "apis/apps/v1/deployments".
	ResourcesPrefix = Prefix + "resources/"
)

// ChangesPath is where the agent of cluster posts its ChangeBatches.
func ChangesPath(cluster string) string { return IngestPrefix + cluster + "/changes" }

// VersionsPath is where the agent of cluster reads the versions the index
// holds.
func VersionsPath(cluster string) string { return IngestPrefix + cluster + "/versions" }

// ParseIngestPath returns the cluster and the endpoint ("changes" or
// "versions") of an ingest path, or ok false.
func ParseIngestPath(path string) (cluster, endpoint string, ok bool) {
	rest, found := strings.CutPrefix(path, IngestPrefix)
	if !found {
		return "", "", false
	}
	cluster, endpoint, found = strings.Cut(rest, "/")
	if !found || cluster == "" || (endpoint != "changes" && endpoint != "versions") {
		return "", "", false
	}
	return cluster, endpoint, true
}
