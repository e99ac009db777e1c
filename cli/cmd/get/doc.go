// Package get is `flotilla get KIND [NAME]`, a file per kind: token (the
// join command), clusters, clustersets, placements, policies and works,
// as tables (-o wide) or JSON or YAML.
package get
